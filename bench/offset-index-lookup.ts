// Lookups by offset and by time: Ledgerline's sparse index (at most one range
// read) against Pulsar's OpFindNewest binary search (one single-entry read per
// step), on the same synthetic in-memory topic.
//
//   npx tsx bench/offset-index-lookup.ts
//   OFFSET_INDEX_BENCH_SIZES=10000,1000000 OFFSET_INDEX_BENCH_LOOKUPS=5000 npx tsx bench/offset-index-lookup.ts
//
// The store is in memory, so a read costs only the time to build its entries;
// that time is measured and taken out of "CPU us/lookup". The modeled latency
// adds what a real store would charge: a round trip per read plus transfer per
// KiB (defaults: 0.3 ms, about a loopback Redis p50 here, and 1 us/KiB; set
// OFFSET_INDEX_BENCH_RTT_MS and OFFSET_INDEX_BENCH_US_PER_KIB to change them).
import {
  LedgerOffsetIndex,
  TopicOffsetIndex,
  binarySearchByOffset,
  binarySearchByTime,
  encodeEntry,
  findPositionByOffset,
  findPositionByTime,
  type EntryReader,
  type StoredEntry,
  type TopicLedger,
} from '@ledgerline/offset-index';
import { quick, runAlone, type BenchReport, type Comparison } from './bench-report.js';

const ENTRIES_PER_LEDGER = 50_000; // Pulsar's managedLedgerMaxEntriesPerLedger default
const MAX_ENTRIES = 20_000_000;
// `npm run bench` measures the row (10M entries) with fewer lookups by default.
const sizes = (process.env.OFFSET_INDEX_BENCH_SIZES ?? (quick() ? '10000000' : '10000,1000000,10000000'))
  .split(',')
  .map(Number);
const lookups = Number(process.env.OFFSET_INDEX_BENCH_LOOKUPS ?? (quick() ? '2000' : '20000'));
const START_TIME_MS = 1_700_000_000_000;
const roundTripMs = Number(process.env.OFFSET_INDEX_BENCH_RTT_MS ?? '0.3');
const microsPerKiB = Number(process.env.OFFSET_INDEX_BENCH_US_PER_KIB ?? '1');

/** A topic whose entries are generated on read: batch sizes 1..10, about 200 bytes per message. */
class SyntheticTopic implements EntryReader {
  readonly indexes: Uint32Array; // the index (last offset) of every entry, in topic order
  readonly ledgers: TopicLedger[] = [];
  reads = 0;
  entriesRead = 0;
  bytesRead = 0;
  storeNanos = 0n;

  constructor(readonly entryCount: number) {
    this.indexes = new Uint32Array(entryCount);
    let offset = -1;
    for (let entry = 0; entry < entryCount; entry++) {
      offset += batchSize(entry);
      this.indexes[entry] = offset;
    }
    for (let first = 0, ledgerId = 1; first < entryCount; first += ENTRIES_PER_LEDGER, ledgerId++) {
      this.ledgers.push(this.buildLedger(ledgerId, first, Math.min(entryCount, first + ENTRIES_PER_LEDGER)));
    }
  }

  private buildLedger(ledgerId: number, first: number, end: number): TopicLedger {
    const index = new LedgerOffsetIndex({ firstOffset: first === 0 ? 0 : this.indexes[first - 1]! + 1 });
    for (let entry = first; entry < end; entry++) index.append(this.indexes[entry]!, timestampOf(entry), sizeOf(entry));
    const { entryCount: entries, firstOffset, lastOffset, minTimestamp, maxTimestamp } = index;
    return { ledgerId, entries, firstOffset, lastOffset, minTimestamp, maxTimestamp, index };
  }

  async readRange(ledgerId: number, firstEntryId: number, lastEntryId: number): Promise<readonly StoredEntry[]> {
    const started = process.hrtime.bigint();
    this.reads += 1;
    const base = (ledgerId - 1) * ENTRIES_PER_LEDGER;
    const entries: StoredEntry[] = [];
    for (let entryId = firstEntryId; entryId <= lastEntryId; entryId++) {
      const entry = base + entryId;
      const data = encodeEntry({ brokerTimestamp: timestampOf(entry), index: this.indexes[entry]! }, PAYLOAD);
      entries.push({ entryId, data });
      this.bytesRead += sizeOf(entry);
    }
    this.entriesRead += entries.length;
    this.storeNanos += process.hrtime.bigint() - started;
    return entries;
  }

  resetCounters(): void {
    this.reads = 0;
    this.entriesRead = 0;
    this.bytesRead = 0;
    this.storeNanos = 0n;
  }
}

const PAYLOAD = new Uint8Array(16);
function batchSize(entry: number): number {
  return 1 + ((Math.imul(entry ^ 0x9e3779b9, 0x85ebca6b) >>> 27) % 10);
}
function sizeOf(entry: number): number {
  return 200 * batchSize(entry);
}
function timestampOf(entry: number): number {
  return START_TIME_MS + Math.floor(entry / 4);
}

/** Deterministic pseudo-random targets so both methods look up the same values. */
function targets(count: number, max: number): number[] {
  let state = 12345;
  return Array.from({ length: count }, () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return Math.floor((state / 2 ** 32) * (max + 1));
  });
}

interface Row {
  entries: number;
  method: string;
  lookupsPerSecond: number;
  readsPerLookup: number;
  entriesPerLookup: number;
  kibPerLookup: number;
  cpuMicrosPerLookup: number;
  modeledLatencyMs: number;
}

async function measure(
  topic: SyntheticTopic,
  method: string,
  values: number[],
  lookup: (value: number) => Promise<unknown>,
) {
  topic.resetCounters();
  const started = process.hrtime.bigint();
  for (const value of values) await lookup(value);
  const elapsedNanos = process.hrtime.bigint() - started;
  const readsPerLookup = topic.reads / values.length;
  const kibPerLookup = topic.bytesRead / 1024 / values.length;
  const cpuMicrosPerLookup = Number(elapsedNanos - topic.storeNanos) / 1000 / values.length;
  return {
    entries: topic.entryCount,
    method,
    lookupsPerSecond: values.length / (Number(elapsedNanos) / 1e9),
    readsPerLookup,
    entriesPerLookup: topic.entriesRead / values.length,
    kibPerLookup,
    cpuMicrosPerLookup,
    modeledLatencyMs: cpuMicrosPerLookup / 1000 + readsPerLookup * roundTripMs + (kibPerLookup * microsPerKiB) / 1000,
  } satisfies Row;
}

async function crossCheck(topic: SyntheticTopic, index: TopicOffsetIndex, values: number[]): Promise<void> {
  for (const offset of values) {
    const ours = await findPositionByOffset(index, topic, offset);
    const theirs = await binarySearchByOffset(topic.ledgers, topic, offset);
    if (ours.ledgerId !== theirs.ledgerId || ours.entryId !== theirs.entryId) {
      throw new Error(`disagreement at offset ${offset}: ${JSON.stringify(ours)} vs ${JSON.stringify(theirs)}`);
    }
  }
}

async function benchSize(entryCount: number): Promise<Row[]> {
  const buildStarted = Date.now();
  const topic = new SyntheticTopic(entryCount);
  const index = new TopicOffsetIndex(topic.ledgers);
  const indexBytes = topic.ledgers.reduce((sum, ledger) => sum + (ledger.index?.serialize().length ?? 0), 0);
  console.log(
    `${entryCount} entries, ${topic.ledgers.length} ledgers, offsets 0..${index.endOffset - 1}: ` +
      `index ${(indexBytes / 1024).toFixed(1)} KiB (${(indexBytes / entryCount).toFixed(3)} B/entry), built in ${Date.now() - buildStarted} ms`,
  );
  const offsets = targets(lookups, index.endOffset - 1);
  const times = targets(lookups, timestampOf(entryCount - 1) - START_TIME_MS).map((delta) => START_TIME_MS + delta);
  const baselineCount = Math.max(100, Math.floor(lookups / 4));
  await crossCheck(topic, index, offsets.slice(0, 200));
  return [
    await measure(topic, 'index by offset', offsets, (offset) => findPositionByOffset(index, topic, offset)),
    await measure(topic, 'binary search by offset', offsets.slice(0, baselineCount), (offset) =>
      binarySearchByOffset(topic.ledgers, topic, offset),
    ),
    await measure(topic, 'index by time', times, (time) => findPositionByTime(index, topic, time)),
    await measure(topic, 'binary search by time', times.slice(0, baselineCount), (time) =>
      binarySearchByTime(topic.ledgers, topic, time),
    ),
  ];
}

export async function run(): Promise<BenchReport> {
  for (const size of sizes) {
    if (!Number.isInteger(size) || size < 1 || size > MAX_ENTRIES) throw new Error(`sizes must be 1..${MAX_ENTRIES}`);
  }
  if (!Number.isInteger(lookups) || lookups < 100 || lookups > 1_000_000)
    throw new Error('lookups must be 100..1000000');
  if (!(roundTripMs >= 0 && microsPerKiB >= 0)) throw new Error('the modeled store costs must be numbers >= 0');
  const rows: Row[] = [];
  for (const size of sizes) rows.push(...(await benchSize(size)));
  const comparisons: Comparison[] = [];
  for (const size of sizes) {
    for (const by of ['offset', 'time']) {
      const ours = rows.find((row) => row.entries === size && row.method === `index by ${by}`);
      const peer = rows.find((row) => row.entries === size && row.method === `binary search by ${by}`);
      if (ours === undefined || peer === undefined) continue;
      const figure = `storage reads per find-by-${by}, ${size.toLocaleString('en-US')} entries`;
      comparisons.push({
        figure,
        unit: 'reads',
        ours: ours.readsPerLookup,
        peer: "Pulsar's binary search (OpFindNewest)",
        peerValue: peer.readsPerLookup,
        higherIsBetter: false,
      });
    }
  }
  return {
    section: 'Offsets: find by offset and by time',
    setup:
      `${lookups} lookups per size on a synthetic in-memory topic (50 000 entries per ledger); ` +
      `modeled ms/lookup = CPU + reads x ${roundTripMs} ms + KiB x ${microsPerKiB} us`,
    tables: [
      {
        title: 'lookups',
        rows: rows.map((row) => ({
          entries: row.entries,
          method: row.method,
          'lookups/s (in-mem)': Math.round(row.lookupsPerSecond),
          'reads/lookup': row.readsPerLookup,
          'entries/lookup': row.entriesPerLookup,
          'KiB/lookup': row.kibPerLookup,
          'modeled ms/lookup': row.modeledLatencyMs,
        })),
      },
    ],
    comparisons,
  };
}

runAlone(module, run);
