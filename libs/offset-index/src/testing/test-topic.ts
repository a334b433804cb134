// Helpers shared by this package's tests: generated topics, a counting fake
// store, and brute-force answers to compare lookups against.
import fc from 'fast-check';
import { encodeEntry } from '../entry-framing.js';
import { LedgerOffsetIndex } from '../ledger-offset-index.js';
import type { EntryReader, MessagePosition, StoredEntry } from '../positions.js';
import type { TopicLedger } from '../topic-ledger.js';

export interface EntrySpec {
  batchSize: number;
  timestampStepMs: number;
  payloadBytes: number;
}

export interface TopicSpec {
  firstOffset: number;
  startTimeMs: number;
  ledgers: EntrySpec[][];
  indexed: boolean[];
  entriesPerPoint: number;
  bytesPerPoint: number;
}

export interface ModelEntry {
  ledgerId: number;
  entryId: number;
  firstOffset: number;
  index: number;
  timestampMs: number;
}

export interface GeneratedTopic {
  ledgers: TopicLedger[];
  entries: ModelEntry[];
  store: Map<number, StoredEntry[]>;
}

/** Topics with random batch sizes, ledger roll points (including empty ledgers) and clocks that sometimes go back. */
export const topicSpecArbitrary: fc.Arbitrary<TopicSpec> = fc
  .record({
    firstOffset: fc.integer({ min: 0, max: 1000 }),
    startTimeMs: fc.integer({ min: 10, max: 1_000_000 }),
    ledgers: fc.array(
      fc.array(
        fc.record({
          batchSize: fc.integer({ min: 1, max: 5 }),
          timestampStepMs: fc.integer({ min: -4, max: 6 }),
          payloadBytes: fc.integer({ min: 0, max: 40 }),
        }),
        { maxLength: 40 },
      ),
      { minLength: 1, maxLength: 6 },
    ),
    indexed: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
    entriesPerPoint: fc.integer({ min: 1, max: 9 }),
    bytesPerPoint: fc.integer({ min: 1, max: 300 }),
  })
  .map((spec) => ({ ...spec, indexed: spec.indexed.map((flag, position) => flag || position % 2 === 0) }));

export function buildTopic(spec: TopicSpec, options: { allIndexed?: boolean } = {}): GeneratedTopic {
  const ledgers: TopicLedger[] = [];
  const entries: ModelEntry[] = [];
  const store = new Map<number, StoredEntry[]>();
  let nextOffset = spec.firstOffset;
  let clock = spec.startTimeMs;
  spec.ledgers.forEach((ledgerSpec, position) => {
    const ledgerId = 10 + position * 3;
    const spacing = { entriesPerPoint: spec.entriesPerPoint, bytesPerPoint: spec.bytesPerPoint };
    const index = new LedgerOffsetIndex({ firstOffset: nextOffset, ...spacing });
    const stored: StoredEntry[] = [];
    const firstOffset = nextOffset;
    for (const entry of ledgerSpec) {
      clock = Math.max(0, clock + entry.timestampStepMs);
      const lastOffset = nextOffset + entry.batchSize - 1;
      const data = encodeEntry(
        { brokerTimestamp: clock, index: lastOffset },
        new Uint8Array(entry.payloadBytes).fill(7),
      );
      index.append(lastOffset, clock, data.length);
      entries.push({
        ledgerId,
        entryId: stored.length,
        firstOffset: nextOffset,
        index: lastOffset,
        timestampMs: clock,
      });
      stored.push({ entryId: stored.length, data });
      nextOffset = lastOffset + 1;
    }
    store.set(ledgerId, stored);
    const ledger: TopicLedger = { ledgerId, entries: stored.length, firstOffset, lastOffset: nextOffset - 1 };
    if (stored.length > 0)
      Object.assign(ledger, { minTimestamp: index.minTimestamp, maxTimestamp: index.maxTimestamp });
    if (options.allIndexed === true || spec.indexed[position % spec.indexed.length]) ledger.index = index;
    ledgers.push(ledger);
  });
  return { ledgers, entries, store };
}

/** A fake ledger store that counts every range read and every entry it returns. */
export class CountingReader implements EntryReader {
  reads = 0;
  entriesRead = 0;
  constructor(private readonly store: Map<number, StoredEntry[]>) {}

  async readRange(ledgerId: number, firstEntryId: number, lastEntryId: number): Promise<readonly StoredEntry[]> {
    this.reads += 1;
    const ledger = this.store.get(ledgerId) ?? [];
    if (firstEntryId < 0 || lastEntryId >= ledger.length || firstEntryId > lastEntryId) {
      throw new Error(`read outside ledger ${ledgerId}: ${firstEntryId}..${lastEntryId} of ${ledger.length}`);
    }
    const slice = ledger.slice(firstEntryId, lastEntryId + 1);
    this.entriesRead += slice.length;
    return slice;
  }
}

function endPosition(topic: GeneratedTopic): MessagePosition {
  const last = topic.ledgers[topic.ledgers.length - 1] as TopicLedger;
  return {
    ledgerId: last.ledgerId,
    entryId: last.entries,
    batchIndex: 0,
    offset: last.lastOffset + 1,
    beforeEarliest: false,
    pastEnd: true,
  };
}

function earliest(topic: GeneratedTopic, beforeEarliest: boolean): MessagePosition {
  const first = topic.entries[0] as ModelEntry;
  return {
    ledgerId: first.ledgerId,
    entryId: 0,
    batchIndex: 0,
    offset: first.firstOffset,
    beforeEarliest,
    pastEnd: false,
  };
}

/** The answer by scanning every entry. */
export function bruteForceOffset(topic: GeneratedTopic, offset: number): MessagePosition {
  const first = topic.entries[0];
  if (first === undefined) return endPosition(topic);
  if (offset < first.firstOffset) return earliest(topic, true);
  const entry = topic.entries.find((candidate) => candidate.firstOffset <= offset && offset <= candidate.index);
  if (entry === undefined) return endPosition(topic);
  const { ledgerId, entryId } = entry;
  return { ledgerId, entryId, batchIndex: offset - entry.firstOffset, offset, beforeEarliest: false, pastEnd: false };
}

/** The first entry whose timestamp reaches the time, by scanning every entry. */
export function bruteForceTime(topic: GeneratedTopic, timestampMs: number): MessagePosition {
  const entry = topic.entries.find((candidate) => candidate.timestampMs >= timestampMs);
  if (entry === undefined) return endPosition(topic);
  if (entry === topic.entries[0]) {
    const firstLedger = topic.entries.filter((candidate) => candidate.ledgerId === entry.ledgerId);
    return earliest(topic, timestampMs < Math.min(...firstLedger.map((candidate) => candidate.timestampMs)));
  }
  const { ledgerId, entryId, firstOffset } = entry;
  return { ledgerId, entryId, batchIndex: 0, offset: firstOffset, beforeEarliest: false, pastEnd: false };
}
