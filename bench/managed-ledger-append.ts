// Managed ledger throughput on Redis, beside raw pipelined XADD to the same
// Redis from the same process:
//   - append: 1 KiB entries through ManagedLedger.append, many in flight
//     (the pipeline group-commits them), and 1 KiB batches of 100 messages;
//   - tailing read: a cursor reading while the producer appends (entry cache);
//   - catch-up read: a new owner reading everything from the store (cold cache);
//   - cursor persistence: time and bytes of one snapshot with 1M holes;
//   - cursor recovery: time to open the topic as a new owner with a cursor of
//     1M and 10M holes (fence, read the snapshot chunks, decode, claim);
//   - cursor summary and ranges: what GetCursorSummary (an ack map of 512
//     cells) and ListAckedRanges (a page of 100) cost the owner at those holes.
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
import { DATA_PATH_LIMITS } from '@ledgerline/cursor-codec';
import { RedisLedgerStore, SqliteLedgerStore } from '@ledgerline/ledger-store';
import { emptyManagedLedgerInfo, infoToProto } from '@ledgerline/ledger-info';
import {
  ManagedLedger,
  MetadataStoreManagedLedgerMetadata,
  type ManagedLedgerDependencies,
} from '@ledgerline/managed-ledger';
import { createMetadataStore, type MetadataStore } from '@ledgerline/metadata-store';
import { managedLedgerPath } from '@ledgerline/naming';
import { startRedis, type ServerProcess } from '@ledgerline/testing';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_SQLITE_SYNCHRONOUS } from '@ledgerline/storage-kit';
import { rawSqliteInserts } from './baselines.js';
import { runAlone, sized, type BenchReport, type Comparison } from './bench-report.js';
import { seededRandom } from './seeded-random.js';

const APPENDS = sized({ quick: 20_000, normal: 50_000, full: 200_000 });
/** Standalone appends: SQLite with fsync is slower, so fewer make a steady figure. */
const SQLITE_APPENDS = sized({ quick: 10_000, normal: 20_000, full: 100_000 });
/** Rows per transaction of the raw SQLite peer: the managed ledger's maxWriteBatchEntries default, its largest group commit. */
const RAW_SQLITE_TRANSACTION_ROWS = 1_000;
const ENTRY_BYTES = 1024;
const IN_FLIGHT = 2_000;
const XADD_BATCH = 100;
const XADD_IN_FLIGHT = 8;
const HOLE_COUNTS = sized({ quick: [1_000_000], normal: [1_000_000, 10_000_000], full: [1_000_000, 10_000_000] });
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
async function appendRow(ml: ManagedLedger, label: string, numMessages: number, appends = APPENDS): Promise<Row> {
  const histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000 });
  let next = 0;
  const worker = async () => {
    while (next < appends) {
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
    entriesPerSecond: Math.round(appends / s),
    messagesPerSecond: Math.round((appends * numMessages) / s),
    megabytesPerSecond: Math.round((appends * ENTRY_BYTES) / s / 1e5) / 10,
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
async function xaddRows(url: string): Promise<Row[]> {
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
  const xadd: Row = {
    measurement: 'raw XADD pipelined (baseline)',
    entriesPerSecond: Math.round(APPENDS / s),
    megabytesPerSecond: Math.round((APPENDS * ENTRY_BYTES) / s / 1e5) / 10,
  };
  const catchUp = await xreadgroupCatchUpRow(client, stream);
  await client.del(stream);
  await client.quit();
  return [xadd, catchUp];
}

/** The catch-up peer: a consumer group reads the whole stream from the start, 1 000 per XREADGROUP, acking each page. */
async function xreadgroupCatchUpRow(client: Redis, stream: string): Promise<Row> {
  await client.xgroup('CREATE', stream, 'catch-up', '0');
  const started = process.hrtime.bigint();
  let seen = 0;
  for (;;) {
    const reply = (await client.xreadgroupBuffer('GROUP', 'catch-up', 'c', 'COUNT', 1_000, 'STREAMS', stream, '>')) as
      [Buffer, [Buffer, Buffer[]][]][] | null;
    const entries = reply?.[0]?.[1] ?? [];
    if (entries.length === 0) break;
    seen += entries.length;
    await client.xack(stream, 'catch-up', ...entries.map(([id]) => id));
  }
  if (seen !== APPENDS) throw new Error(`XREADGROUP read ${seen} entries, expected ${APPENDS}`);
  const s = seconds(started);
  return {
    measurement: 'raw XREADGROUP + XACK catch-up, 1 000 per read (baseline)',
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
    cursor: { snapshotIntervalMs: 3_600_000 },
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
    if (chunk.length === DATA_PATH_LIMITS.maxAckPositionsPerCall) cursor.ack(chunk.splice(0));
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
  const ownerCursor = owner.getCursor('holes')!;
  const recovered = ownerCursor.stats().ackedRanges;
  if (recovered !== holesLeft) throw new Error(`recovered ${recovered} ranges, persisted ${holesLeft}`);
  // What GetCursorSummary and ListAckedRanges cost the owner (the console's subscription page): the map of
  // 512 cells over every range, and a page of 100 ranges from the middle of the span.
  const mapStarted = process.hrtime.bigint();
  const summary = ownerCursor.summary(512);
  const mapMs = seconds(mapStarted) * 1000;
  if (summary.ackMap.ackedRanges !== recovered) throw new Error(`the map counted ${summary.ackMap.ackedRanges} ranges`);
  const pageStarted = process.hrtime.bigint();
  const page = ownerCursor.ackedRanges({ ledgerId, entryId: Math.floor(entries / 2) }, 100);
  const pageMs = seconds(pageStarted) * 1000;
  if (page.ranges.length !== 100) throw new Error(`a page of ${page.ranges.length} ranges`);
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
    { measurement: `cursor summary: ack map of 512 cells (${label})`, ms: Math.round(mapMs) },
    { measurement: `cursor ranges: a page of 100 from the middle (${label})`, ms: Math.round(pageMs * 10) / 10 },
  ];
}

/**
 * Standalone mode's write path: a managed ledger on the SQLite ledger and
 * metadata stores (standalone's defaults), one entry per append with many in
 * flight (group commit decides how many share a transaction), beside the
 * embedded limit: the same 1 KiB rows inserted by one process in transactions
 * as large as the largest group commit, with the same synchronous setting.
 */
async function sqliteRows(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-ml-sqlite-'));
  const ledgerStore = new SqliteLedgerStore({ path: join(dir, 'ledgers.db') });
  const metadataStore = await createMetadataStore({ kind: 'sqlite', path: join(dir, 'metadata.db') });
  try {
    const deps: ManagedLedgerDependencies = {
      ledgerStore,
      metadata: new MetadataStoreManagedLedgerMetadata(metadataStore),
      logger: quiet,
      metricsRegistry: new Registry(),
    };
    // Standalone's stores, with their default synchronous setting (the raw inserts below use the same).
    const ml = await ManagedLedger.open(topic(), deps, { config: benchConfig() });
    await ml.append(payload);
    const rows = [
      await appendRow(ml, 'standalone (SQLite): append 1 KiB entries', 1, SQLITE_APPENDS),
      await appendRow(ml, 'standalone (SQLite): append 1 KiB batches of 100 messages', 100, SQLITE_APPENDS),
    ];
    await ml.close();
    const raw = rawSqliteInserts(
      join(dir, 'raw.db'),
      SQLITE_APPENDS,
      payload,
      DEFAULT_SQLITE_SYNCHRONOUS,
      RAW_SQLITE_TRANSACTION_ROWS,
    );
    rows.push({
      measurement: raw.system,
      entriesPerSecond: raw.entriesPerSecond,
      megabytesPerSecond: raw.megabytesPerSecond,
    });
    return rows;
  } finally {
    await ledgerStore.close();
    await metadataStore.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<BenchReport> {
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
    const rows: Row[] = await xaddRows(url);
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
    const standalone = await sqliteRows();
    const cursors: Row[] = [];
    for (const holes of HOLE_COUNTS) {
      for (const pattern of ['alternating', 'random'] as const)
        cursors.push(...(await cursorRows(holes, pattern, deps, metadataStore)));
    }
    const entries = (row: Row | undefined): number => row?.entriesPerSecond ?? Number.NaN;
    const [xadd, xreadgroup, append, , catchUp] = rows;
    const [sqliteSingle, , rawSqlite] = standalone;
    const versus = (figure: string, ours: Row | undefined, peer: Row | undefined): Comparison => ({
      figure,
      unit: 'entries/s',
      ours: entries(ours),
      peer: peer?.measurement ?? '',
      peerValue: entries(peer),
      higherIsBetter: true,
    });
    return {
      section: 'Managed ledger (no gRPC): appends, reads, standalone SQLite, cursor state',
      setup:
        `${APPENDS} appends of ${ENTRY_BYTES} B per Redis row and ${SQLITE_APPENDS} per SQLite row, ${IN_FLIGHT} in flight; ` +
        `cursor snapshots of ${HOLE_COUNTS.map((h) => h.toLocaleString('en-US')).join(' and ')} holes`,
      tables: [
        { title: 'managed ledger on Redis', rows: rows.map((row) => ({ ...row })) },
        { title: 'standalone (SQLite)', rows: standalone.map((row) => ({ ...row })) },
        { title: 'cursor persistence and recovery (ack holes)', rows: cursors.map((row) => ({ ...row })) },
      ],
      comparisons: [
        versus('managed-ledger append, 1 KiB entries', append, xadd),
        versus('catch-up read from the store (backlog)', catchUp, xreadgroup),
        versus('standalone append, 1 KiB entries (group commit)', sqliteSingle, rawSqlite),
      ],
    };
  } finally {
    await ledgerStore.close();
    await metadataStore.close();
    await server?.stop();
  }
}

runAlone(module, run);
