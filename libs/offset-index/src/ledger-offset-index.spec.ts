import fc from 'fast-check';
import { crc32c } from '@node-rs/crc32';
import { LedgerlineError } from '@ledgerline/errors';
import { LedgerOffsetIndex } from './ledger-offset-index.js';
import { decodeLedgerIndex, encodeLedgerIndex } from './ledger-index-codec.js';
import { buildTopic, topicSpecArbitrary, type ModelEntry } from './testing/test-topic.js';

function singleLedger(spec: Parameters<typeof buildTopic>[0]) {
  const topic = buildTopic({ ...spec, ledgers: [spec.ledgers.flat()] }, { allIndexed: true });
  const ledger = topic.ledgers[0]!;
  return { index: ledger.index!, entries: topic.entries, stored: topic.store.get(ledger.ledgerId)! };
}

function expectRangeHolds(
  range: { firstEntryId: number; lastEntryId: number },
  entry: ModelEntry,
  entriesPerPoint: number,
) {
  expect(range.firstEntryId).toBeLessThanOrEqual(entry.entryId);
  expect(range.lastEntryId).toBeGreaterThanOrEqual(entry.entryId);
  expect(range.lastEntryId - range.firstEntryId + 1).toBeLessThanOrEqual(entriesPerPoint);
}

describe('LedgerOffsetIndex', () => {
  it('puts every offset and every time in a range of at most entriesPerPoint entries that holds it', () => {
    fc.assert(
      fc.property(topicSpecArbitrary, (spec) => {
        const { index, entries } = singleLedger(spec);
        for (const entry of entries) {
          for (let offset = entry.firstOffset; offset <= entry.index; offset++) {
            const range = index.locateOffset(offset)!;
            expectRangeHolds(range, entry, spec.entriesPerPoint);
            const before = entries.filter((other) => other.entryId < range.firstEntryId).at(-1);
            expect(range.firstOffset).toBe(before === undefined ? index.firstOffset : before.index + 1);
          }
          // The first entry whose own timestamp reaches the time, even when clocks went back.
          const target = entries.find((other) => other.timestampMs >= entry.timestampMs)!;
          expectRangeHolds(index.locateTime(entry.timestampMs)!, target, spec.entriesPerPoint);
        }
        expect(index.locateOffset(index.lastOffset + 1)).toBeUndefined();
        expect(index.locateTime(index.maxTimestamp + 1)).toBeUndefined();
      }),
      { numRuns: 100 },
    );
  });

  it('places a point at least every entriesPerPoint entries and once bytesPerPoint bytes have gone by', () => {
    const index = new LedgerOffsetIndex({ firstOffset: 0, entriesPerPoint: 100, bytesPerPoint: 1000 });
    for (let entry = 0; entry < 50; entry++) index.append(entry, 5, 400);
    // 400 + 400 reaches no threshold, 1200 does: a point every 3 entries.
    expect(index.pointCount).toBe(17);
    const byCount = new LedgerOffsetIndex({ firstOffset: 0, entriesPerPoint: 4 });
    for (let entry = 0; entry < 9; entry++) byCount.append(entry, 5, 1);
    expect(byCount.pointCount).toBe(3);
  });

  it('serializes compactly and deserializes to an index that answers the same and keeps growing the same', () => {
    fc.assert(
      fc.property(topicSpecArbitrary, (spec) => {
        const { index, entries } = singleLedger(spec);
        const copy = LedgerOffsetIndex.deserialize(index.serialize());
        expect(copy.serialize()).toEqual(index.serialize());
        for (const entry of entries) {
          expect(copy.locateOffset(entry.index)).toEqual(index.locateOffset(entry.index));
          expect(copy.locateTime(entry.timestampMs)).toEqual(index.locateTime(entry.timestampMs));
        }
        index.append(index.lastOffset + 2, 7, 10);
        copy.append(copy.lastOffset + 2, 7, 10);
        expect(copy.serialize()).toEqual(index.serialize());
      }),
      { numRuns: 100 },
    );
  });

  it('costs a few bytes per point', () => {
    const index = new LedgerOffsetIndex({ firstOffset: 5_000_000, entriesPerPoint: 64 });
    for (let entry = 0; entry < 50_000; entry++)
      index.append(5_000_000 + entry * 10 + 9, 1_700_000_000_000 + entry, 1000);
    expect(index.pointCount).toBe(782);
    expect(index.serialize().length).toBeLessThan(782 * 6);
  });

  it('rebuilds from the ledger entries exactly what was built while appending', () => {
    fc.assert(
      fc.property(topicSpecArbitrary, (spec) => {
        const { index, stored } = singleLedger(spec);
        const rebuilt = LedgerOffsetIndex.rebuild(stored, {
          firstOffset: index.firstOffset,
          entriesPerPoint: spec.entriesPerPoint,
          bytesPerPoint: spec.bytesPerPoint,
        });
        expect(rebuilt.serialize()).toEqual(index.serialize());
      }),
      { numRuns: 50 },
    );
  });

  it('refuses to rebuild from entries out of order or without offsets', () => {
    const index = new LedgerOffsetIndex({ firstOffset: 0 });
    expect(() => LedgerOffsetIndex.rebuild([{ entryId: 1, data: new Uint8Array() }], { firstOffset: 0 })).toThrow(
      expect.objectContaining({ reason: 'ENTRIES_NOT_CONSECUTIVE' }),
    );
    expect(() => LedgerOffsetIndex.rebuild([{ entryId: 0, data: new Uint8Array([1]) }], { firstOffset: 0 })).toThrow(
      expect.objectContaining({ code: 'FAILED_PRECONDITION', reason: 'ENTRY_WITHOUT_OFFSET' }),
    );
    index.append(3, 1, 1);
    expect(() => index.append(3, 1, 1)).toThrow(expect.objectContaining({ reason: 'OFFSET_NOT_INCREASING' }));
    expect(() => new LedgerOffsetIndex({ firstOffset: 0, entriesPerPoint: 0 })).toThrow(
      expect.objectContaining({ reason: 'INVALID_INDEX_SPACING' }),
    );
  });

  it('detects any corruption of the serialized form, and never throws anything but a LedgerlineError', () => {
    const { index } = singleLedger(fc.sample(topicSpecArbitrary, { numRuns: 1, seed: 7 })[0]!);
    const bytes = index.serialize();
    fc.assert(
      fc.property(fc.nat(bytes.length - 1), fc.integer({ min: 1, max: 255 }), (position, flip) => {
        const corrupted = bytes.slice();
        corrupted[position]! ^= flip;
        expect(() => LedgerOffsetIndex.deserialize(corrupted)).toThrow(LedgerlineError);
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (noise) => {
        try {
          LedgerOffsetIndex.deserialize(Uint8Array.from([0x4c, 0x4f, 1, ...noise]));
        } catch (error) {
          expect(error).toBeInstanceOf(LedgerlineError);
        }
      }),
      { numRuns: 500 },
    );
    // Noise behind a valid checksum reaches the structural checks: it decodes to a usable index or is refused.
    const varints = fc.array(fc.oneof(fc.integer({ min: 0, max: 20 }), fc.nat()), { maxLength: 30 });
    fc.assert(
      fc.property(varints, (values) => {
        const body = Uint8Array.from([0x4c, 0x4f, 1, ...values.flatMap(varintBytes)]);
        const framed = new Uint8Array(body.length + 4);
        framed.set(body);
        new DataView(framed.buffer).setUint32(body.length, crc32c(body));
        try {
          const decoded = LedgerOffsetIndex.deserialize(framed);
          expect(decoded.serialize()).toEqual(framed);
          for (
            let offset = decoded.firstOffset;
            offset <= decoded.lastOffset && offset < decoded.firstOffset + 50;
            offset++
          ) {
            expect(decoded.locateOffset(offset)?.firstOffset).toBeLessThanOrEqual(offset);
          }
        } catch (error) {
          expect(error).toBeInstanceOf(LedgerlineError);
        }
      }),
      { numRuns: 500 },
    );
    const unknownVersion = bytes.slice();
    unknownVersion[2] = 9;
    expect(() => LedgerOffsetIndex.deserialize(unknownVersion)).toThrow(
      expect.objectContaining({ reason: 'OFFSET_INDEX_VERSION_UNKNOWN' }),
    );
  });
});

function varintBytes(value: number): number[] {
  const out: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
  return out;
}

describe('LedgerOffsetIndex by event time, and its stored versions', () => {
  /** Entries 0..19 at broker times 1000.., each with records stamped far in the past, some without one. */
  function withEventTimes(): LedgerOffsetIndex {
    const index = new LedgerOffsetIndex({ firstOffset: 40, entriesPerPoint: 3 });
    for (let entry = 0; entry < 20; entry++) {
      const maxEventTime = entry % 4 === 3 ? undefined : 100 + ((entry * 37) % 50) * 10;
      index.append(40 + entry * 2 + 1, 1000 + entry, 10, maxEventTime);
    }
    return index;
  }

  it('locates the first entry whose largest event time (or broker time, without one) reaches a time', () => {
    const index = withEventTimes();
    const keys = Array.from({ length: 20 }, (_, entry) =>
      entry % 4 === 3 ? 1000 + entry : 100 + ((entry * 37) % 50) * 10,
    );
    for (let time = 0; time <= 1020; time += 7) {
      const first = keys.findIndex((key) => key >= time);
      const range = index.locateEventTime(time);
      if (first < 0) expect(range).toBeUndefined();
      else expectRangeHolds(range!, { entryId: first } as ModelEntry, 3);
    }
  });

  it('round-trips version 2 with its event times, and reads version 1 with broker times standing in', () => {
    const index = withEventTimes();
    const bytes = index.serialize();
    expect(bytes[2]).toBe(2);
    const copy = LedgerOffsetIndex.deserialize(bytes);
    expect(copy.maxEventTime).toBe(index.maxEventTime);
    const old = LedgerOffsetIndex.deserialize(encodeLedgerIndex(decodeLedgerIndex(bytes), 1));
    expect(old.maxEventTime).toBe(old.maxTimestamp);
    for (let time = 0; time <= 1021; time++) {
      expect(copy.locateEventTime(time)).toEqual(index.locateEventTime(time));
      expect(old.locateEventTime(time)).toEqual(old.locateTime(time));
      expect(old.locateTime(time)).toEqual(index.locateTime(time));
    }
    // A version 1 index grows on as one whose entries carried no event times.
    old.append(200, 2000, 10, 5000);
    expect(old.maxEventTime).toBe(5000);
  });

  it('reads a version 1 index laid out by hand', () => {
    // magic 4c4f, version 1, header: 4 per point, 1000 bytes, first 0, 1 entry, 1 message, min 7, max 7,
    // 1 entry since the point, 3 bytes since it, 1 point; then the crc32c.
    const body = Uint8Array.from([0x4c, 0x4f, 1, 4, 0xe8, 0x07, 0, 1, 1, 7, 7, 1, 3, 1]);
    const bytes = new Uint8Array(body.length + 4);
    bytes.set(body);
    new DataView(bytes.buffer).setUint32(body.length, crc32c(body));
    const index = LedgerOffsetIndex.deserialize(bytes);
    expect([index.entryCount, index.maxTimestamp, index.maxEventTime]).toEqual([1, 7, 7]);
    expect(index.locateEventTime(7)).toEqual({ firstEntryId: 0, lastEntryId: 0, firstOffset: 0 });
    expect(index.locateEventTime(8)).toBeUndefined();
  });

  it('refuses a version 2 index whose event times run past its largest', () => {
    const state = decodeLedgerIndex(withEventTimes().serialize());
    state.maxEventTime = 0;
    expect(() => LedgerOffsetIndex.deserialize(encodeLedgerIndex(state))).toThrow(/future event time/);
  });
});
