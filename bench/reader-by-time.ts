// Starting a reader by time on a topic of 10M offsets: the SDK's reader
// (`start: { timestamp }`, one FindPosition call the owner answers from the
// offset index with one read) beside what it did before, a binary search over
// offsets with one-entry FetchByOffset calls (about log2(offsets) round trips),
// both against `ledgerline standalone` (its own process, SQLite).
//
// The topic holds OFFSETS messages of 16 bytes in batches of BATCH (one entry
// each), published over about half a minute, so entries carry distinct broker
// timestamps; the target time is the one noted when half had been sent. Calls
// are counted on the server (its gRPC metrics), time from the reader's
// creation to its first message.
//
// Run: npx tsx bench/reader-by-time.ts [--full]   (also part of `npm run bench`)
//   Default 10 000 000 offsets (the row); the runner's default 2 000 000; --full 10 000 000.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient as createSdkClient, type LedgerlineClient } from '@ledgerline/client';
import { AdminService, TopicsService } from '@ledgerline/proto';
import { closeClient, createClient, type Client } from '@ledgerline/rpc';
import { freePort } from '@ledgerline/testing';
import { startStandalone, stopChild, waitForOwner } from './baselines.js';
import { formatNumber, runAlone, sized, type BenchReport } from './bench-report.js';

const OFFSETS = sized({ quick: 2_000_000, normal: 10_000_000, full: 10_000_000 });
const BATCH = 1_000;
const STARTS = 20;
const TOPIC = 'persistent://bench/by-time/events';
const payload = new Uint8Array(16).fill(7);

/** Publishes OFFSETS messages in batched entries; resolves with the time noted halfway. */
async function fill(client: LedgerlineClient): Promise<number> {
  const producer = await client.producer({
    topic: TOPIC,
    batching: { maxMessages: BATCH, maxDelayMs: 5, maxBytes: 1024 * 1024 },
  });
  let halfway = 0;
  try {
    let sends: Promise<unknown>[] = [];
    for (let i = 0; i < OFFSETS; i++) {
      sends.push(producer.send(payload));
      if (i === OFFSETS / 2) halfway = Date.now();
      // Bounded memory: wait for each slice before queueing the next.
      if (sends.length === 50_000) {
        await Promise.all(sends);
        sends = [];
      }
    }
    await Promise.all(sends);
  } finally {
    await producer.close();
  }
  return halfway;
}

/** Server-side calls of `method` so far, from the standalone's Prometheus endpoint. */
async function callsOf(metricsPort: number, method: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  let total = 0;
  const pattern = new RegExp(`^ledgerline_grpc_server_handled_total\\{[^}]*method="${method}"[^}]*\\} (\\d+)`, 'gm');
  for (const match of text.matchAll(pattern)) total += Number(match[1]);
  return total;
}

/** What the reader did before: the first offset whose entry's broker time is at or after `timestampMs`. */
async function binarySearchOffset(topics: Client<typeof TopicsService>, timestampMs: number): Promise<bigint> {
  let low = 0n;
  let high = BigInt(OFFSETS);
  while (low < high) {
    const middle = (low + high) / 2n;
    const { entries } = await topics.fetchByOffset({ topic: TOPIC, offset: middle, maxEntries: 1 });
    const entry = entries[0];
    if (entry === undefined || Number(entry.brokerTimestampMs) >= timestampMs) high = middle;
    else low = middle + 1n;
  }
  return low;
}

interface StartRow {
  system: string;
  starts: number;
  callsPerStart: number;
  msPerStartP50: number;
  msPerStartMax: number;
}

async function timed(
  system: string,
  metricsPort: number,
  method: string,
  start: () => Promise<bigint>,
): Promise<{ row: StartRow; offsets: bigint[] }> {
  const before = await callsOf(metricsPort, method);
  const times: number[] = [];
  const offsets: bigint[] = [];
  for (let i = 0; i < STARTS; i++) {
    const started = performance.now();
    offsets.push(await start());
    times.push(performance.now() - started);
  }
  const calls = (await callsOf(metricsPort, method)) - before;
  times.sort((a, b) => a - b);
  return {
    row: {
      system,
      starts: STARTS,
      callsPerStart: calls / STARTS,
      msPerStartP50: Number(times[Math.floor(STARTS / 2)]!.toFixed(2)),
      msPerStartMax: Number(times.at(-1)!.toFixed(2)),
    },
    offsets,
  };
}

async function rows(address: string, metricsPort: number): Promise<StartRow[]> {
  const admin = createClient(AdminService, address);
  try {
    await admin.createTenant({ tenant: 'bench' });
    await admin.createNamespace({ namespace: 'bench/by-time', policies: { retentionTimeMinutes: 60n } });
    await admin.createTopic({ topic: TOPIC });
  } finally {
    closeClient(admin);
  }
  const owner = await waitForOwner(address, TOPIC);
  const client = createSdkClient({ serviceUrl: address });
  const topics = createClient(TopicsService, owner);
  try {
    const halfway = await fill(client);
    const sdk = await timed(
      `SDK reader, start { timestamp } (FindPosition), ${formatNumber(OFFSETS)} offsets`,
      metricsPort,
      '/ledgerline.v1.TopicsService/FindPosition',
      async () => {
        const reader = await client.reader({ topic: TOPIC, start: { timestamp: halfway } });
        try {
          const first = await reader[Symbol.asyncIterator]().next();
          if (first.done === true) throw new Error('the reader ended before its first message');
          return first.value.offset;
        } finally {
          await reader.close();
        }
      },
    );
    const search = await timed(
      `binary search of one-entry FetchByOffset calls (before), ${formatNumber(OFFSETS)} offsets`,
      metricsPort,
      '/ledgerline.v1.TopicsService/FetchByOffset',
      () => binarySearchOffset(topics, halfway),
    );
    // Both find the first message of the entry the time falls in; the search lands on the entry's first offset too.
    if (sdk.offsets[0] !== search.offsets[0]) {
      throw new Error(`the two ways disagree: reader at ${sdk.offsets[0]}, search at ${search.offsets[0]}`);
    }
    return [sdk.row, search.row];
  } finally {
    closeClient(topics);
    await client.close();
  }
}

export async function run(): Promise<BenchReport> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-reader-by-time-'));
  let child: ChildProcess | undefined;
  try {
    const port = await freePort();
    const metricsPort = await freePort();
    child = await startStandalone(dataDir, port, ['--metrics-port', String(metricsPort)]);
    const measured = await rows(`127.0.0.1:${port}`, metricsPort);
    const [sdk, search] = measured as [StartRow, StartRow];
    return {
      section: 'Start a reader by time (continuous offsets: one FindPosition call)',
      setup:
        `${formatNumber(OFFSETS)} messages of 16 B in entries of ${BATCH}, in \`ledgerline standalone\` (its own process); ` +
        `${STARTS} starts at the time noted halfway through publishing, each timed to the reader's first message; ` +
        `calls counted on the server`,
      tables: [{ title: 'starting a reader by time', rows: measured.map((row) => ({ ...row })) }],
      comparisons: [
        {
          figure: `round trips to start a reader by time, ${formatNumber(OFFSETS)} offsets`,
          unit: 'calls',
          ours: sdk.callsPerStart,
          peer: search.system,
          peerValue: search.callsPerStart,
          higherIsBetter: false,
        },
        {
          figure: `time to a reader's first message by time, p50, ${formatNumber(OFFSETS)} offsets`,
          unit: 'ms',
          ours: sdk.msPerStartP50,
          peer: search.system,
          peerValue: search.msPerStartP50,
          higherIsBetter: false,
        },
      ],
    };
  } finally {
    if (child !== undefined) await stopChild(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

runAlone(module, run);
