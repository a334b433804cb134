// Managed ledger throughput on Redis, beside raw pipelined XADD to the same
// Redis from the same process:
//   - append: 1 KiB entries through ManagedLedger.append, many in flight
//     (the pipeline group-commits them), and 1 KiB batches of 100 messages;
//   - tailing read: a cursor reading while the producer appends (entry cache);
//   - catch-up read: a new owner reading everything from the store (cold cache);
//   - cursor persistence: time and bytes of one snapshot with 1M holes;
//   - cursor recovery: time to open the topic as a new owner with a cursor of
//     1M and 10M holes (fence, read the snapshot chunks, decode, claim).
// Cursor states are built on a synthetic closed ledger recorded in metadata
// (2 entries per hole), so no 20M entries need writing first.
//
// Run: npx tsx bench/managed-ledger-append.ts [--full]
//   Default 50 000 appends per row and cursors of 1M and 10M holes (about a
//   minute); --full appends 200 000 per row.
//   Redis: LEDGERLINE_BENCH_REDIS_URL, or a throwaway redis-server started here.
import { Redis } from 'ioredis';
import * as hdr from 'hdr-histogram-js';
import { Registry } from 'prom-client';
import { RedisLedgerStore } from '@ledgerline/ledger-store';
import {
  emptyManagedLedgerInfo,
  infoToProto,
  ManagedLedger,
  MetadataStoreManagedLedgerMetadata,
  type ManagedLedgerDependencies,
} from '@ledgerline/managed-ledger';
import { createMetadataStore, type MetadataStore } from '@ledgerline/metadata-store';
import { managedLedgerPath } from '@ledgerline/naming';
import { startRedis, type ServerProcess } from '@ledgerline/testing';
import { seededRandom } from './seeded-random.js';

const full = process.argv.includes('--full');
const APPENDS = full ? 200_000 : 50_000;
const ENTRY_BYTES = 1024;
const IN_FLIGHT = 2_000;
const XADD_BATCH = 100;
const XADD_IN_FLIGHT = 8;
const HOLE_COUNTS = [1_000_000, 10_000_000];
const payload = new Uint8Array(ENTRY_BYTES).map((_, i) => (i * 7) & 0xff);
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

interface Row {
  measurement: string;
  entriesPerSecond?: number;
  messagesPerSecond?: number;
  megabytesPerSecond?: number;
  latencyMsP50?: number;
  latencyMsP99?: number;
  ms?: number;
  bytes?: number;
  bytesPerHole?: number;
  ledgerEntries?: number;
}

let topicCounter = 0;
function topic(): string {
  return `persistent://bench/ml/t-${process.pid}-${topicCounter++}`;
}

function seconds(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** Appends `count` entries keeping IN_FLIGHT outstanding; records each append's latency. */
async function appendRow(ml: ManagedLedger, label: string, numMessages: number): Promise<Row> {
  const histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000 });
  let next = 0;
  const worker = async () => {
    while (next < APPENDS) {
      next++;
      const started = process.hrtime.bigint();
      await ml.append(payload, numMessages);
      histogram.recordValue(Number((process.hrtime.bigint() - started) / 1000n));
    }
  };
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const s = seconds(started);
  return {
    measurement: label,
    entriesPerSecond: Math.round(APPENDS / s),
    messagesPerSecond: Math.round((APPENDS * numMessages) / s),
    megabytesPerSecond: Math.round((APPENDS * ENTRY_BYTES) / s / 1e5) / 10,
    latencyMsP50: histogram.getValueAtPercentile(50) / 1000,
    latencyMsP99: histogram.getValueAtPercentile(99) / 1000,
  };
}

/** A cursor tails the topic while APPENDS entries are produced; the clock stops when it has read them all. */
async function tailingRow(ml: ManagedLedger): Promise<Row> {
  const cursor = await ml.openCursor('tail', { start: { initialPosition: 'latest' } });
  const started = process.hrtime.bigint();
  const consumer = (async () => {
    for (let seen = 0; seen < APPENDS;) {
      const entries = await cursor.readEntriesOrWait({ maxEntries: 1_000, timeoutMs: 10_000 });
      if (entries.length === 0) throw new Error('the tailing reader stalled');
      seen += entries.length;
      cursor.ackCumulative(entries[entries.length - 1]!.position);
    }
  })();
  await appendRow(ml, 'unused', 1);
  await consumer;
  const s = seconds(started);
  return {
    measurement: 'tailing read (append + read)',
    entriesPerSecond: Math.round(APPENDS / s),
    megabytesPerSecond: Math.round((APPENDS * ENTRY_BYTES) / s / 1e5) / 10,
  };
}

/** A new owner reads every entry of the topic from the store, 1 000 at a time. */
async function catchUpRow(name: string, deps: ManagedLedgerDependencies, expected: number): Promise<Row> {
  const ml = await ManagedLedger.open(name, deps, { config: benchConfig() });
  const cursor = await ml.openCursor('catch-up', { start: { initialPosition: 'earliest' } });
  const started = process.hrtime.bigint();
  let seen = 0;
  for (
    let entries = await cursor.readEntries({ maxEntries: 1_000 });
    entries.length > 0;
    entries = await cursor.readEntries({ maxEntries: 1_000 })
  ) {
    seen += entries.length;
  }
  const s = seconds(started);
  await ml.close();
  if (seen !== expected) throw new Error(`catch-up read ${seen} entries, expected ${expected}`);
  return {
    measurement: 'catch-up read (cold, from Redis)',
    entriesPerSecond: Math.round(seen / s),
    megabytesPerSecond: Math.round((seen * ENTRY_BYTES) / s / 1e5) / 10,
  };
}

/** The baseline: XADD_BATCH XADDs per pipeline, XADD_IN_FLIGHT pipelines outstanding, one connection. */
async function xaddRow(url: string): Promise<Row> {
  const client = new Redis(url);
  const stream = `bench:ml-xadd:${process.pid}`;
  const bytes = Buffer.from(payload);
  let next = 0;
  const worker = async () => {
    while (next < APPENDS / XADD_BATCH) {
      next++;
      const pipeline = client.pipeline();
      for (let i = 0; i < XADD_BATCH; i++) pipeline.xadd(stream, '*', 'd', bytes);
      const replies = await pipeline.exec();
      if (replies?.some(([error]) => error)) throw new Error('XADD failed');
    }
  };
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: XADD_IN_FLIGHT }, worker));
  const s = seconds(started);
  await client.del(stream);
  await client.quit();
  return {
    measurement: 'raw XADD pipelined (baseline)',
    entriesPerSecond: Math.round(APPENDS / s),
    megabytesPerSecond: Math.round((APPENDS * ENTRY_BYTES) / s / 1e5) / 10,
  };
}

function benchConfig() {
  return {
    maxEntriesPerLedger: 50_000,
    minLedgerAgeMs: 0,
    maintenanceIntervalMs: 0,
    retentionTimeMs: -1,
    retentionSizeBytes: -1,
    maxPendingAppends: 100_000,
    cursor: { snapshotIntervalMs: 3_600_000, maxAckPositionsPerCall: 1_000_000 },
  };
}

/**
 * Records a closed ledger in a new topic's metadata (no entries are stored:
 * acks, snapshots and recovery never read data entries), acknowledges entries
 * so that `holes` unacknowledged gaps remain ('alternating': every other
 * entry; 'random': each entry with probability 1/2, which leaves about one
 * gap per 4 entries and does not compress), persists one snapshot, then opens
 * the topic as a new owner.
 */
async function cursorRows(
  holes: number,
  pattern: 'alternating' | 'random',
  deps: () => ManagedLedgerDependencies,
  metadataStore: MetadataStore,
): Promise<Row[]> {
  const name = topic();
  const metadata = new MetadataStoreManagedLedgerMetadata(metadataStore);
  const ledgerId = await metadata.allocateLedgerId();
  const info = emptyManagedLedgerInfo();
  const entries = pattern === 'alternating' ? holes * 2 : holes * 4;
  info.ledgers.push({
    ledgerId,
    entries,
    sizeBytes: entries * 64,
    closedAtMs: Date.now(),
    firstOffset: 0,
    lastOffset: entries - 1,
    properties: new Map(),
  });
  info.properties.set('index', String(entries - 1));
  await metadata.putManagedLedgerInfo(managedLedgerPath(name, 1), infoToProto(info), 'absent');
  const ml = await ManagedLedger.open(name, deps(), { config: benchConfig() });
  const cursor = await ml.openCursor('holes', { start: { initialPosition: 'earliest' } });
  const chunk: { ledgerId: number; entryId: number }[] = [];
  const random = seededRandom(12345);
  const acked = (entryId: number) => (pattern === 'alternating' ? entryId % 2 === 1 : random() < 0.5);
  let ackCount = 0;
  const ackStarted = process.hrtime.bigint();
  for (let entryId = 0; entryId < entries; entryId++) {
    if (!acked(entryId)) continue;
    chunk.push({ ledgerId, entryId });
    ackCount++;
    if (chunk.length === 1_000_000) cursor.ack(chunk.splice(0));
  }
  cursor.ack(chunk.splice(0));
  const ackSeconds = seconds(ackStarted);
  const holesLeft = cursor.stats().ackedRanges;
  const persistStarted = process.hrtime.bigint();
  await cursor.flush();
  const persistMs = seconds(persistStarted) * 1000;
  const snapshot = cursor.lastSnapshot!;
  const recoverStarted = process.hrtime.bigint();
  const owner = await ManagedLedger.open(name, deps(), { config: benchConfig() });
  const recoverMs = seconds(recoverStarted) * 1000;
  const recovered = owner.getCursor('holes')!.stats().ackedRanges;
  if (recovered !== holesLeft) throw new Error(`recovered ${recovered} ranges, persisted ${holesLeft}`);
  await owner.close();
  await ml.close().catch(() => undefined);
  const label = `${(holesLeft / 1_000_000).toFixed(2)}M holes, ${pattern}`;
  return [
    { measurement: `cursor ack (${label})`, entriesPerSecond: Math.round(ackCount / ackSeconds) },
    {
      measurement: `cursor persist (${label})`,
      ms: Math.round(persistMs),
      bytes: snapshot.bytes,
      bytesPerHole: Math.round((snapshot.bytes / holesLeft) * 1000) / 1000,
      ledgerEntries: snapshot.entries,
    },
    { measurement: `cursor recovery: open as new owner (${label})`, ms: Math.round(recoverMs) },
  ];
}

async function main(): Promise<void> {
  let server: ServerProcess | undefined;
  const url = process.env['LEDGERLINE_BENCH_REDIS_URL'] ?? (server = await startRedis()).url;
  const keyPrefix = `bench-ml:${process.pid}:`;
  const ledgerStore = new RedisLedgerStore({ url, keyPrefix });
  const metadataStore = await createMetadataStore({ kind: 'redis', url, keyPrefix });
  const deps = (): ManagedLedgerDependencies => ({
    ledgerStore,
    metadata: new MetadataStoreManagedLedgerMetadata(metadataStore),
    logger: quiet,
    metricsRegistry: new Registry(),
  });
  try {
    console.log(`managed ledger on Redis: ${APPENDS} appends of ${ENTRY_BYTES} B per row, ${IN_FLIGHT} in flight`);
    const rows: Row[] = [await xaddRow(url)];
    const single = topic();
    const ml = await ManagedLedger.open(single, deps(), { config: benchConfig() });
    await ml.append(payload);
    rows.push(await appendRow(ml, 'append 1 KiB entries', 1));
    rows.push(await appendRow(ml, 'append 1 KiB batches of 100 messages', 100));
    await ml.close();
    rows.push(await catchUpRow(single, deps(), 2 * APPENDS + 1));
    const tailing = await ManagedLedger.open(topic(), deps(), { config: benchConfig() });
    rows.push(await tailingRow(tailing));
    await tailing.close();
    for (const holes of HOLE_COUNTS) {
      for (const pattern of ['alternating', 'random'] as const)
        rows.push(...(await cursorRows(holes, pattern, deps, metadataStore)));
    }
    console.table(rows);
    const xadd = rows[0]!.entriesPerSecond!;
    const append = rows[1]!.entriesPerSecond!;
    console.log(`managed-ledger append reaches ${Math.round((100 * append) / xadd)}% of raw pipelined XADD`);
  } finally {
    await ledgerStore.close();
    await metadataStore.close();
    await server?.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
