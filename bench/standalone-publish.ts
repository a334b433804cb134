// Standalone publish over gRPC: `ledgerline standalone` (its own process,
// SQLite under a throwaway data directory, as a user starts it) taking 1 KiB
// messages over one gRPC Publish stream, beside the embedded limit: the same
// 1 KiB rows inserted into SQLite by one process, in transactions as large as
// the managed ledger's largest group commit, with standalone's synchronous
// setting. The managed-ledger section measures the same write path without
// gRPC.
//
// The raw inserts run after the standalone process stopped, so they do not
// share the cores with it. Compare rows of one run. Under each of our rows,
// the event-loop delay of standalone and of the bench process (the client)
// is reported beside the targets (event-loop-delay.ts).
//
// Run: npx tsx bench/standalone-publish.ts [--full]   (also part of `npm run bench`)
//   Default 30 000 messages per row; --full 200 000; the runner's default 20 000.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdminService, TopicsService } from '@ledgerline/proto';
import { closeClient, createClient } from '@ledgerline/rpc';
import { DEFAULT_SQLITE_SYNCHRONOUS } from '@ledgerline/storage-kit';
import { freePort } from '@ledgerline/testing';
import {
  PUBLISH_WINDOW,
  publishStream,
  rawSqliteInserts,
  startStandalone,
  stopChild,
  throughput,
  waitForOwner,
  type ThroughputRow,
} from './baselines.js';
import { runAlone, sized, type BenchReport, type Comparison } from './bench-report.js';
import {
  EVENT_LOOP_TABLE_TITLE,
  eventLoopComparisons,
  eventLoopRows,
  startIdleProcess,
  underWatch,
  type EventLoopDelay,
  type WatchedProcess,
} from './event-loop-delay.js';

const MESSAGES = sized({ quick: 20_000, normal: 30_000, full: 200_000 });
const MESSAGE_BYTES = 1024;
/** Messages per entry in the batched row, as in the publish section. */
const CLIENT_BATCH = 100;
/** Rows per transaction of the raw SQLite peer: the managed ledger's maxWriteBatchEntries default, its largest group commit. */
const RAW_SQLITE_TRANSACTION_ROWS = 1_000;
/** Topics published to at once in the many-topics row, one stream each, sharing the window (as the Redis rows do). */
const MANY_TOPICS = 16;
const payload = new Uint8Array(MESSAGE_BYTES).map((_, i) => (i * 7) & 0xff);

/** Our rows, and each process's event-loop delay under each of them. */
interface StandaloneRuns {
  rows: ThroughputRow[];
  loops: Map<string, EventLoopDelay>[];
}

async function standaloneRows(): Promise<StandaloneRuns> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-standalone-'));
  let child: ChildProcess | undefined;
  let idle: Awaited<ReturnType<typeof startIdleProcess>> | undefined;
  try {
    const port = await freePort();
    const metricsPort = await freePort();
    const extraArgs = ['--read-only-grpc-port', '0', '--metrics-port', String(metricsPort)];
    child = await startStandalone(dataDir, port, extraArgs);
    idle = await startIdleProcess();
    const watched: WatchedProcess[] = [
      { name: 'standalone', metricsPort },
      { name: 'client', metricsPort: undefined },
      idle.watched,
    ];
    const address = `127.0.0.1:${port}`;
    const admin = createClient(AdminService, address);
    const topics = createClient(TopicsService, address);
    const topic = (name: string): string => `persistent://bench/standalone/${name}`;
    try {
      await admin.createTenant({ tenant: 'bench' });
      await admin.createNamespace({ namespace: 'bench/standalone', policies: { retentionTimeMinutes: 60n } });
      const many = Array.from({ length: MANY_TOPICS }, (_, i) => topic(`many-${i}`));
      for (const name of [topic('single'), topic('batched'), ...many]) await admin.createTopic({ topic: name });
      await waitForOwner(address, topic('single'));
      // Warm-up: topic loads (lease, ledger), connections, JIT.
      await publishStream(topics, topic('single'), 2_000, () => payload);
      await publishStream(topics, topic('batched'), 20, () => payload, undefined, CLIENT_BATCH);
      await Promise.all(many.map((name) => publishStream(topics, name, 100, () => payload)));
      // Each row's clock runs inside its event-loop window, so the scrapes around it are not timed.
      const { result: singleRow, delays: singleLoop } = await underWatch(watched, async () => {
        const started = process.hrtime.bigint();
        const single = await publishStream(topics, topic('single'), MESSAGES, () => payload);
        const system = 'standalone: gRPC Publish stream, one message per entry (dedup on)';
        return throughput(system, single, MESSAGE_BYTES, started);
      });
      const { result: batchedRow, delays: batchedLoop } = await underWatch(watched, async () => {
        const started = process.hrtime.bigint();
        const batches = await publishStream(
          topics,
          topic('batched'),
          MESSAGES / CLIENT_BATCH,
          () => payload,
          undefined,
          CLIENT_BATCH,
        );
        const system = `standalone: gRPC Publish stream, client batches of ${CLIENT_BATCH}`;
        return throughput(system, batches * CLIENT_BATCH, MESSAGE_BYTES, started);
      });
      const { result: manyRow, delays: manyLoop } = await underWatch(watched, () => manyTopicsRow(topics, many));
      return { rows: [singleRow, batchedRow, manyRow], loops: [singleLoop, batchedLoop, manyLoop] };
    } finally {
      closeClient(admin);
      closeClient(topics);
    }
  } finally {
    if (child !== undefined) await stopChild(child);
    if (idle !== undefined) await stopChild(idle.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** One message per entry to MANY_TOPICS topics at once: what a store that writes each topic on its own pays (data-path.md, 4.4). */
async function manyTopicsRow(topics: ReturnType<typeof createClient<typeof TopicsService>>, names: string[]) {
  const window = Math.floor(PUBLISH_WINDOW / names.length);
  const perTopic = Math.ceil(MESSAGES / names.length);
  const started = process.hrtime.bigint();
  const counts = await Promise.all(
    names.map((name) => publishStream(topics, name, perTopic, () => payload, undefined, 1, undefined, window)),
  );
  const sent = counts.reduce((sum, count) => sum + count, 0);
  const system = `standalone: ${names.length} gRPC Publish streams, one topic each, one message per entry (dedup on)`;
  return throughput(system, sent, MESSAGE_BYTES, started);
}

export async function run(): Promise<BenchReport> {
  const { rows: ours, loops } = await standaloneRows();
  const dir = mkdtempSync(join(tmpdir(), 'bench-raw-sqlite-'));
  let raw: ReturnType<typeof rawSqliteInserts>;
  try {
    raw = rawSqliteInserts(
      join(dir, 'raw.db'),
      MESSAGES,
      payload,
      DEFAULT_SQLITE_SYNCHRONOUS,
      RAW_SQLITE_TRANSACTION_ROWS,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const rawRow: ThroughputRow = {
    system: raw.system,
    messagesPerSecond: raw.entriesPerSecond,
    megabytesPerSecond: raw.megabytesPerSecond,
  };
  const [single, batched, many] = ours as [ThroughputRow, ThroughputRow, ThroughputRow];
  const versus = (figure: string, row: ThroughputRow, target: number): Comparison => ({
    figure,
    unit: 'msg/s',
    ours: row.messagesPerSecond,
    peer: rawRow.system,
    peerValue: rawRow.messagesPerSecond,
    higherIsBetter: true,
    target: { ratio: target, atLeast: true },
  });
  return {
    section: 'Standalone publish over gRPC (SQLite)',
    setup:
      `${MESSAGES} messages of ${MESSAGE_BYTES} B per row over one gRPC Publish stream (${PUBLISH_WINDOW} messages in flight) ` +
      `into \`ledgerline standalone\` (its own process, synchronous=${DEFAULT_SQLITE_SYNCHRONOUS}); raw inserts of the same rows ` +
      `from one process after it stopped`,
    tables: [
      { title: 'publish throughput', rows: [single, batched, many, rawRow].map((row) => ({ ...row })) },
      {
        title: EVENT_LOOP_TABLE_TITLE,
        rows: [
          ...eventLoopRows(single.system, loops[0]!),
          ...eventLoopRows(batched.system, loops[1]!),
          ...eventLoopRows(many.system, loops[2]!),
        ],
      },
    ],
    comparisons: [
      // Issue 40's targets: at least 0.3 of raw SQLite unbatched, 0.6 in batches.
      versus('standalone publish 1 KiB over gRPC, batching off', single, 0.3),
      versus(`standalone publish 1 KiB over gRPC, client batches of ${CLIENT_BATCH}`, batched, 0.6),
      ...eventLoopComparisons(loops, ['standalone']),
    ],
  };
}

runAlone(module, run);
