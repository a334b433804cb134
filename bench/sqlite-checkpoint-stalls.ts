// How long a SQLite commit holds the event loop, with SQLite checkpointing
// inside the commit that takes the WAL past 1,000 pages (its default), and
// with the checkpoints on a worker thread (storage-kit's
// startSqliteCheckpointer, what both SQLite stores run). Per row, 1 KiB rows
// in transactions of 16 (one store turn's appends) are committed on the main
// thread, one transaction per turn (at full speed, or at most one per
// millisecond), a lock held by the checkpointer waited for on timers as the
// stores' lock queue does; each commit is timed, the wait from submitting a
// transaction to its commit kept, and the event loop's delay sampled beside it
// (perf_hooks, 1 ms resolution). Same file layout and pragmas as the ledger
// store (WAL, synchronous FULL by default, NORMAL).
//
// Run: npx tsx bench/sqlite-checkpoint-stalls.ts [--full]   (also part of `npm run bench`)
//   Default 40,000 rows per row; --full 200,000.
import Database from 'better-sqlite3';
import * as hdr from 'hdr-histogram-js';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import {
  LOCK_ATTEMPT_MS,
  LOCK_RETRY_MS,
  startSqliteCheckpointer,
  type SqliteSynchronous,
} from '@ledgerline/storage-kit';
import { runAlone, sized, type BenchReport } from './bench-report.js';

const ROWS = sized({ quick: 20_000, normal: 40_000, full: 200_000 });
const ROW_BYTES = 1024;
const ROWS_PER_TRANSACTION = 16;
/** A commit longer than this is a stall a tail-latency figure sees. */
const STALL_MS = 5;

interface Row extends Record<string, string | number> {
  checkpoints: string;
  synchronous: string;
  pace: string;
  rowsPerSecond: number;
  commitMsP50: number;
  commitMsP99: number;
  commitMsMax: number;
  commitsOverStall: number;
  longestWaitForCommitMs: number;
  eventLoopDelayMsP99: number;
  eventLoopDelayMsMax: number;
}

const round = (value: number) => Number(value.toFixed(3));
const isBusy = (thrown: unknown) => String((thrown as { code?: unknown }).code ?? '').startsWith('SQLITE_BUSY');

async function measure(checkpoints: 'inline' | 'thread', synchronous: SqliteSynchronous, paced: boolean): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'ledgerline-checkpoint-bench-'));
  const db = new Database(join(dir, 'ledgers.db'));
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  // As the stores: SQLite waits LOCK_ATTEMPT_MS for a lock, the rest of the wait runs on timers.
  db.pragma(`busy_timeout = ${LOCK_ATTEMPT_MS}`);
  db.exec(
    'CREATE TABLE entries (ledger_id INTEGER NOT NULL, entry_id INTEGER NOT NULL, data BLOB NOT NULL, ' +
      'PRIMARY KEY (ledger_id, entry_id)) STRICT',
  );
  const checkpointer = checkpoints === 'thread' ? startSqliteCheckpointer(db, { startAfterMs: 0 }) : undefined;
  const insert = db.prepare('INSERT INTO entries (ledger_id, entry_id, data) VALUES (1, ?, ?)');
  const payload = Buffer.alloc(ROW_BYTES, 7);
  const commit = db.transaction((first: number) => {
    for (let i = 0; i < ROWS_PER_TRANSACTION; i++) insert.run(first + i, payload);
  });
  const commits = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000 });
  const loop = monitorEventLoopDelay({ resolution: 1 });
  let stalls = 0;
  let longestWaitMs = 0;
  loop.enable();
  const started = process.hrtime.bigint();
  for (let first = 0; first < ROWS; first += ROWS_PER_TRANSACTION) {
    const submitted = performance.now();
    for (;;) {
      const before = process.hrtime.bigint();
      try {
        commit(first);
      } catch (thrown) {
        if (!isBusy(thrown)) throw thrown;
        await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
        continue;
      }
      const micros = Number((process.hrtime.bigint() - before) / 1000n);
      commits.recordValue(Math.max(1, micros));
      if (micros > STALL_MS * 1000) stalls++;
      break;
    }
    longestWaitMs = Math.max(longestWaitMs, performance.now() - submitted);
    await new Promise((resolve) => (paced ? setTimeout(resolve, 1) : setImmediate(resolve)));
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
    pace: paced ? '1 transaction per ms at most' : 'full speed',
    rowsPerSecond: Math.round(ROWS / seconds),
    commitMsP50: round(commits.getValueAtPercentile(50) / 1000),
    commitMsP99: round(commits.getValueAtPercentile(99) / 1000),
    commitMsMax: round(commits.maxValue / 1000),
    commitsOverStall: stalls,
    longestWaitForCommitMs: round(longestWaitMs),
    eventLoopDelayMsP99: round(loop.percentile(99) / 1e6),
    eventLoopDelayMsMax: round(loop.max / 1e6),
  };
}

export async function run(): Promise<BenchReport> {
  const loadBefore = loadavg()[0]!;
  const rows: Row[] = [];
  const cases = [
    ['FULL', true],
    ['FULL', false],
    ['NORMAL', false],
  ] as const;
  for (const [synchronous, paced] of cases) {
    // Alternated, so a neighbour's burst lands on both kinds alike.
    rows.push(await measure('inline', synchronous, paced));
    rows.push(await measure('thread', synchronous, paced));
  }
  const [inlinePaced, threadPaced] = rows;
  return {
    section: 'SQLite checkpoints and the event loop',
    setup:
      `${ROWS} rows of ${ROW_BYTES} B committed ${ROWS_PER_TRANSACTION} per transaction on the main thread, one ` +
      `transaction per event-loop turn (at full speed or at most one per ms), a lock waited for on timers, into a WAL-mode file laid out as the ledger store's; checkpoints inside the ` +
      `commit that passes 1,000 WAL pages (SQLite's default) or on a worker thread (what both SQLite stores run); ` +
      `a commit over ${STALL_MS} ms counts as a stall; load average ${loadBefore.toFixed(1)} before`,
    tables: [{ title: 'commit time on the event loop', rows }],
    comparisons: [
      {
        figure: 'event-loop delay p99 while committing (synchronous FULL, paced), checkpoints on a thread',
        unit: 'ms',
        ours: threadPaced!.eventLoopDelayMsP99,
        peer: 'SQLite checkpointing inside commits',
        peerValue: inlinePaced!.eventLoopDelayMsP99,
        higherIsBetter: false,
      },
    ],
  };
}

runAlone(module, run);
