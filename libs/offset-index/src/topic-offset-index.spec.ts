import fc from 'fast-check';
import { LedgerlineError } from '@ledgerline/errors';
import { binarySearchByOffset, binarySearchByTime } from './binary-search-baseline.js';
import { findPositionByOffset, findPositionByTime } from './find-position.js';
import { LedgerOffsetIndex } from './ledger-offset-index.js';
import { resolveOffsetInEntries, resolveTimeInEntries } from './resolve-in-entries.js';
import {
  CountingReader,
  bruteForceOffset,
  bruteForceTime,
  buildTopic,
  topicSpecArbitrary,
  type GeneratedTopic,
} from './testing/test-topic.js';
import { TopicOffsetIndex } from './topic-offset-index.js';
import type { TopicLedger } from './topic-ledger.js';

function offsetsToProbe(index: TopicOffsetIndex): number[] {
  const low = Math.max(0, index.firstOffset - 2);
  return Array.from({ length: index.endOffset + 2 - low }, (_, position) => low + position);
}

function timesToProbe(topic: GeneratedTopic): number[] {
  const times = new Set<number>([0]);
  for (const entry of topic.entries) [-1, 0, 1].forEach((delta) => times.add(Math.max(0, entry.timestampMs + delta)));
  return [...times];
}

function allIndexed(topic: GeneratedTopic): boolean {
  return topic.ledgers.every((ledger) => ledger.entries === 0 || ledger.index !== undefined);
}

describe('TopicOffsetIndex', () => {
  it('finds every offset like a brute-force scan, with at most one range read per lookup', async () => {
    await fc.assert(
      fc.asyncProperty(topicSpecArbitrary, async (spec) => {
        const topic = buildTopic(spec);
        const index = new TopicOffsetIndex(topic.ledgers);
        for (const offset of offsetsToProbe(index)) {
          const reader = new CountingReader(topic.store);
          const position = await findPositionByOffset(index, reader, offset);
          expect(position).toEqual(bruteForceOffset(topic, offset));
          if (allIndexed(topic)) {
            expect(reader.reads).toBeLessThanOrEqual(1);
            expect(reader.entriesRead).toBeLessThanOrEqual(spec.entriesPerPoint);
          }
        }
      }),
      { numRuns: 60 },
    );
  });

  it('finds the first entry at or after every time like a brute-force scan, with at most one range read', async () => {
    await fc.assert(
      fc.asyncProperty(topicSpecArbitrary, async (spec) => {
        const topic = buildTopic(spec);
        const index = new TopicOffsetIndex(topic.ledgers);
        for (const time of timesToProbe(topic)) {
          const reader = new CountingReader(topic.store);
          expect(await findPositionByTime(index, reader, time)).toEqual(bruteForceTime(topic, time));
          if (allIndexed(topic)) expect(reader.reads).toBeLessThanOrEqual(1);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('lands on the same entry as the Pulsar-style binary search, which needs about 2 + log2 N reads', async () => {
    await fc.assert(
      fc.asyncProperty(topicSpecArbitrary, async (spec) => {
        const topic = buildTopic(spec, { allIndexed: true });
        const index = new TopicOffsetIndex(topic.ledgers);
        const bound = 2 + Math.ceil(Math.log2(Math.max(topic.entries.length, 1))) + 1;
        for (const offset of offsetsToProbe(index)) {
          const baseline = await binarySearchByOffset(topic.ledgers, new CountingReader(topic.store), offset);
          const position = await findPositionByOffset(index, new CountingReader(topic.store), offset);
          expect({ ledgerId: position.ledgerId, entryId: position.entryId }).toEqual({
            ledgerId: baseline.ledgerId,
            entryId: baseline.entryId,
          });
          expect(baseline.reads).toBeLessThanOrEqual(bound);
        }
      }),
      { numRuns: 40 },
    );
  });

  it('agrees with the binary search by time while clocks never go back', async () => {
    const monotonic = topicSpecArbitrary.map((spec) => ({
      ...spec,
      ledgers: spec.ledgers.map((entries) =>
        entries.map((entry) => ({ ...entry, timestampStepMs: Math.abs(entry.timestampStepMs) })),
      ),
    }));
    await fc.assert(
      fc.asyncProperty(monotonic, async (spec) => {
        const topic = buildTopic(spec);
        const index = new TopicOffsetIndex(topic.ledgers);
        for (const time of timesToProbe(topic)) {
          const baseline = await binarySearchByTime(topic.ledgers, new CountingReader(topic.store), time);
          const position = await findPositionByTime(index, new CountingReader(topic.store), time);
          expect([position.ledgerId, position.entryId]).toEqual([baseline.ledgerId, baseline.entryId]);
        }
      }),
      { numRuns: 30 },
    );
  });

  it('returns the one range to read, and resolves the offset and batch index in what that read returns', async () => {
    const topic = buildTopic({
      firstOffset: 100,
      startTimeMs: 1000,
      ledgers: [Array.from({ length: 20 }, () => ({ batchSize: 3, timestampStepMs: 1, payloadBytes: 4 }))],
      indexed: [true],
      entriesPerPoint: 4,
      bytesPerPoint: 1 << 20,
    });
    const index = new TopicOffsetIndex(topic.ledgers);
    const location = index.locateOffset(125);
    expect(location).toEqual({
      kind: 'read',
      range: { ledgerId: 10, firstEntryId: 8, lastEntryId: 11, firstOffset: 124 },
    });
    if (location.kind !== 'read') throw new Error('expected a read');
    const { ledgerId, firstEntryId, lastEntryId } = location.range;
    const entries = await new CountingReader(topic.store).readRange(ledgerId, firstEntryId, lastEntryId);
    expect(resolveOffsetInEntries(location.range, entries, 125)).toMatchObject({
      entryId: 8,
      batchIndex: 1,
      offset: 125,
    });
    expect(index.locateOffset(124)).toMatchObject({ kind: 'resolved', position: { entryId: 8, batchIndex: 0 } });
    const byTime = index.locateTime(1010);
    if (byTime.kind !== 'read') throw new Error('expected a read');
    const timeEntries = await new CountingReader(topic.store).readRange(
      10,
      byTime.range.firstEntryId,
      byTime.range.lastEntryId,
    );
    expect(resolveTimeInEntries(byTime.range, timeEntries, 1010)).toMatchObject({ entryId: 9, offset: 127 });
  });

  it('resolves offsets below the first retained one to the earliest position, and past the end to the end', () => {
    const topic = buildTopic({
      firstOffset: 50,
      startTimeMs: 1000,
      ledgers: [[{ batchSize: 2, timestampStepMs: 1, payloadBytes: 1 }], []],
      indexed: [true],
      entriesPerPoint: 4,
      bytesPerPoint: 100,
    });
    const index = new TopicOffsetIndex(topic.ledgers);
    expect(index.locateOffset(3)).toEqual({
      kind: 'resolved',
      position: { ledgerId: 10, entryId: 0, batchIndex: 0, offset: 50, beforeEarliest: true, pastEnd: false },
    });
    expect(index.locateOffset(52)).toEqual({
      kind: 'resolved',
      position: { ledgerId: 13, entryId: 0, batchIndex: 0, offset: 52, beforeEarliest: false, pastEnd: true },
    });
    expect(index.locateTime(5000)).toMatchObject({ kind: 'resolved', position: { pastEnd: true, offset: 52 } });
  });

  it('pages through a ledger without an index, one bounded read at a time', async () => {
    const spec = {
      firstOffset: 0,
      startTimeMs: 1,
      ledgers: [Array.from({ length: 25 }, () => ({ batchSize: 2, timestampStepMs: 1, payloadBytes: 1 }))],
      indexed: [false],
      entriesPerPoint: 4,
      bytesPerPoint: 100,
    };
    const topic = buildTopic(spec);
    const index = new TopicOffsetIndex(topic.ledgers);
    const reader = new CountingReader(topic.store);
    expect(await findPositionByOffset(index, reader, 45, { maxReadEntries: 10 })).toMatchObject({
      entryId: 22,
      batchIndex: 1,
    });
    expect(reader.reads).toBe(3);
  });

  it('refuses ledgers whose offsets do not follow on, and an index that does not match its ledger', () => {
    const first: TopicLedger = {
      ledgerId: 1,
      entries: 1,
      firstOffset: 0,
      lastOffset: 0,
      minTimestamp: 1,
      maxTimestamp: 1,
    };
    const gap: TopicLedger = {
      ledgerId: 2,
      entries: 1,
      firstOffset: 2,
      lastOffset: 2,
      minTimestamp: 1,
      maxTimestamp: 1,
    };
    expect(() => new TopicOffsetIndex([first, gap])).toThrow(
      expect.objectContaining({ reason: 'OFFSETS_NOT_CONTIGUOUS' }),
    );
    expect(() => new TopicOffsetIndex([])).toThrow(expect.objectContaining({ reason: 'NO_LEDGERS' }));
    const index = new LedgerOffsetIndex({ firstOffset: 0 });
    index.append(0, 1, 10);
    index.append(1, 1, 10);
    expect(() => new TopicOffsetIndex([{ ...first, index }])).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', reason: 'LEDGER_INDEX_MISMATCH' }),
    );
    const tooMany = { ledgerId: 1, entries: 3, firstOffset: 0, lastOffset: 1, minTimestamp: 1, maxTimestamp: 1 };
    expect(() => new TopicOffsetIndex([tooMany])).toThrow(
      expect.objectContaining({ reason: 'INVALID_LEDGER_SUMMARY' }),
    );
    const only = new TopicOffsetIndex([first]);
    expect(() => only.locateOffset(-1)).toThrow(expect.objectContaining({ reason: 'INVALID_OFFSET' }));
    expect(() => only.locateTime(1.5)).toThrow(expect.objectContaining({ reason: 'INVALID_TIMESTAMP' }));
  });

  it('reports entries that disagree with the index as DATA_LOSS, never a wrong position', async () => {
    const topic = buildTopic({
      firstOffset: 0,
      startTimeMs: 1,
      ledgers: [Array.from({ length: 8 }, () => ({ batchSize: 1, timestampStepMs: 1, payloadBytes: 1 }))],
      indexed: [true],
      entriesPerPoint: 4,
      bytesPerPoint: 100,
    });
    const index = new TopicOffsetIndex(topic.ledgers);
    const truncated = { readRange: async () => [] };
    await expect(findPositionByOffset(index, truncated, 5)).rejects.toMatchObject({
      code: 'DATA_LOSS',
      reason: 'SHORT_READ',
    });
    const wrong = new CountingReader(new Map([[10, [...(topic.store.get(10) ?? [])].reverse()]]));
    const failure = await findPositionByOffset(index, wrong, 5).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(LedgerlineError);
    expect((failure as LedgerlineError).code).toBe('DATA_LOSS');
  });
});
