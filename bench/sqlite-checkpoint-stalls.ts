// How long a SQLite commit holds the event loop, with SQLite checkpointing
// inside the commit that takes the WAL past 1,000 pages (its default), and
// with the checkpoints on a worker thread (storage-kit's
// startSqliteCheckpointer, what both SQLite stores run). Per row, 1 KiB rows
// in transactions of 16 (one store turn's appends) are committed on the main
// thread, one transaction per setImmediate so a worker gets turns, as the
// stores' group commit does; each commit is timed, and the event loop's delay
// is sampled beside it (perf_hooks, 1 ms resolution). Same file layout and
// pragmas as the ledger store (WAL, synchronous FULL, then NORMAL).
//
// Run: npx tsx bench/sqlite-checkpoint-stalls.ts [--full]   (also part of `npm run bench`)
//   Default 40,000 rows per row; --full 200,000.
import Database from 'better-sqlite3';
import * as hdr from 'hdr-histogram-js';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startSqliteCheckpointer, type SqliteSynchronous } from '@ledgerline/storage-kit';
import { runAlone, sized, type BenchReport } from './bench-report.js';

const ROWS = sized({ quick: 20_000, normal: 40_000, full: 200_000 });
const ROW_BYTES = 1024;
const ROWS_PER_TRANSACTION = 16;
/** A commit longer than this is a stall a tail-latency figure sees. */
const STALL_MS = 5;

interface Row extends Record<string, string | number> {
  checkpoints: string;
  synchronous: string;
  rowsPerSecond: number;
  commitMsP50: number;
  commitMsP99: number;
  commitMsP999: number;
  commitMsMax: number;
  commitsOverStall: number;
  eventLoopDelayMsMax: number;
}

const round = (value: number) => Number(value.toFixed(3));

async function measure(checkpoints: 'inline' | 'thread', synchronous: SqliteSynchronous): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'ledgerline-checkpoint-bench-'));
  const db = new Database(join(dir, 'ledgers.db'));
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  db.exec(
    'CREATE TABLE entries (ledger_id INTEGER NOT NULL, entry_id INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (ledger_id, entry_id)) STRICT',
  );
  const checkpointer = checkpoints === 'thread' ? startSqliteCheckpointer(db, { startAfterMs: 0 }) : undefined;
  const insert = db.prepare('INSERT INTO entries (ledger_id, entry_id, data) VALUES (1, ?, ?)');
  const commit = db.transaction((first: number) => {
    for (let i = 0; i < ROWS_PER_TRANSACTION; i++) insert.run(first + i, payload);
  });
  const payload = Buffer.alloc(ROW_BYTES, 7);
  const commits = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000 });
  const loop = monitorEventLoopDelay({ resolution: 1 });
  let stalls = 0;
  loop.enable();
  const started = process.hrtime.bigint();
  for (let first = 0; first < ROWS; first += ROWS_PER_TRANSACTION) {
    const before = process.hrtime.bigint();
    commit(first);
    const micros = Number((process.hrtime.bigint() - before) / 1000n);
    commits.recordValue(Math.max(1, micros));
    if (micros > STALL_MS * 1000) stalls++;
    await new Promise((resolve) => setImmediate(resolve));
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  loop.disable();
  await checkpointer?.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
  return {
    checkpoints:
      checkpoints === 'inline' ? 'inside commits (SQLite default)' : 'worker thread (startSqliteCheckpointer)',
    synchronous,
    rowsPerSecond: Math.round(ROWS / seconds),
    commitMsP50: round(commits.getValueAtPercentile(50) / 1000),
    commitMsP99: round(commits.getValueAtPercentile(99) / 1000),
    commitMsP999: round(commits.getValueAtPercentile(99.9) / 1000),
    commitMsMax: round(commits.maxValue / 1000),
    commitsOverStall: stalls,
    eventLoopDelayMsMax: round(loop.max / 1e6),
  };
}

export async function run(): Promise<BenchReport> {
  const loadBefore = loadavg()[0]!;
  const rows: Row[] = [];
  for (const synchronous of ['FULL', 'NORMAL'] as const) {
    // Alternated, so a neighbour's burst lands on both kinds alike.
    rows.push(await measure('inline', synchronous));
    rows.push(await measure('thread', synchronous));
  }
  const [inlineFull, threadFull] = rows;
  return {
    section: 'SQLite checkpoints and the event loop',
    setup:
      `${ROWS} rows of ${ROW_BYTES} B committed ${ROWS_PER_TRANSACTION} per transaction on the main thread, one ` +
      `transaction per event-loop turn, into a WAL-mode file laid out as the ledger store's; checkpoints inside the ` +
      `commit that passes 1,000 WAL pages (SQLite's default) or on a worker thread (what both SQLite stores run); ` +
      `a commit over ${STALL_MS} ms counts as a stall; load average ${loadBefore.toFixed(1)} before`,
    tables: [{ title: 'commit time on the event loop', rows }],
    comparisons: [
      {
        figure: 'longest commit on the event loop, synchronous FULL, checkpoints on a thread vs inside commits',
        unit: 'ms',
        ours: threadFull!.commitMsMax,
        peer: 'SQLite checkpointing inside commits',
        peerValue: inlineFull!.commitMsMax,
        higherIsBetter: false,
      },
    ],
  };
}

runAlone(module, run);
