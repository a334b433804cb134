import fc from 'fast-check';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { PositionInfoSchema, type PositionInfo } from '@ledgerline/proto';
import { LedgerlineError } from '@ledgerline/errors';
import { AckSet } from './ack-set.js';
import { createCursorState, remainingBatchIndexes, type CursorState } from './cursor-state.js';
import { decodeCursorState } from './decode-cursor-state.js';
import { encodeCursorState } from './encode-cursor-state.js';
import { parsePositionKey } from './position.js';
import { cursorStateArbitrary } from './testing/state-arbitraries.js';

/** BitSet.toLongArray of a set of bits given as inclusive ranges, computed independently of the codec. */
function longArrayWords(ranges: [number, number][], bits: Iterable<number> = []): bigint[] {
  let highest = -1;
  for (const [, last] of ranges) highest = Math.max(highest, last);
  const extra = [...bits];
  for (const bit of extra) highest = Math.max(highest, bit);
  const words = new Array<bigint>(Math.floor(highest / 64) + 1).fill(0n);
  const set = (first: number, last: number): void => {
    for (let word = Math.floor(first / 64); word <= Math.floor(last / 64); word++) {
      const from = BigInt(Math.max(first, word * 64) - word * 64);
      const to = BigInt(Math.min(last, word * 64 + 63) - word * 64);
      words[word] = (words[word] ?? 0n) | (((1n << (to - from + 1n)) - 1n) << from);
    }
  };
  for (const [first, last] of ranges) set(first, last);
  for (const bit of extra) set(bit, bit);
  return words.map((word) => BigInt.asIntN(64, word));
}

/** The PositionInfo Pulsar would write for a state, built with protobuf-es objects. */
function expectedPositionInfo(state: CursorState, layout: 'pulsar-ranges' | 'long-array'): PositionInfo {
  const ranges = [...state.acked.ranges()];
  const byLedger = new Map<number, [number, number][]>();
  for (const range of ranges) {
    byLedger.set(range.ledgerId, [...(byLedger.get(range.ledgerId) ?? []), [range.firstEntryId, range.lastEntryId]]);
  }
  const batches = [...state.batchAcks]
    .map(([key, batch]) => ({ position: parsePositionKey(key) ?? { ledgerId: 0, entryId: 0 }, batch }))
    .sort((a, b) => a.position.ledgerId - b.position.ledgerId || a.position.entryId - b.position.entryId);
  return create(PositionInfoSchema, {
    ledgerId: BigInt(state.markDelete.ledgerId),
    entryId: BigInt(state.markDelete.entryId),
    individualDeletedMessages:
      layout === 'pulsar-ranges'
        ? ranges.map((range) => ({
            lowerEndpoint: { ledgerId: BigInt(range.ledgerId), entryId: BigInt(range.firstEntryId - 1) },
            upperEndpoint: { ledgerId: BigInt(range.ledgerId), entryId: BigInt(range.lastEntryId) },
          }))
        : [],
    properties: [...state.properties].map(([name, value]) => ({ name, value: BigInt(value) })),
    batchedEntryDeletionIndexInfo: batches.map(({ position, batch }) => ({
      position: { ledgerId: BigInt(position.ledgerId), entryId: BigInt(position.entryId) },
      deleteSet: longArrayWords([], remainingBatchIndexes(batch)),
    })),
    individualDeletedMessageRanges:
      layout === 'long-array'
        ? [...byLedger].map(([key, ledgerRanges]) => ({ key: BigInt(key), values: longArrayWords(ledgerRanges) }))
        : [],
  });
}

describe('Pulsar PositionInfo bytes', () => {
  it.each(['pulsar-ranges', 'long-array'] as const)('%s equals protobuf-es output byte for byte', (layout) => {
    fc.assert(
      fc.property(cursorStateArbitrary({ cursorProperties: false }), (state) => {
        const ours = encodeCursorState(state, { format: layout }).bytes;
        const reference = toBinary(PositionInfoSchema, expectedPositionInfo(state, layout));
        expect(Buffer.from(ours).equals(Buffer.from(reference))).toBe(true);
        expect(fromBinary(PositionInfoSchema, ours).individualDeletedMessageRanges.length).toBe(
          layout === 'long-array' ? state.acked.ledgerIds().length : 0,
        );
      }),
      { numRuns: layout === 'long-array' ? 15 : 40 },
    );
  });

  it('pulsar-ranges writes open-closed MessageRanges in field 3, with entry -1 for a range starting at 0', () => {
    const acked = AckSet.fromRanges([
      { ledgerId: 10, firstEntryId: 0, lastEntryId: 2 },
      { ledgerId: 10, firstEntryId: 6, lastEntryId: 6 },
      { ledgerId: 11, firstEntryId: 5, lastEntryId: 9 },
    ]);
    const bytes = encodeCursorState(createCursorState({ markDelete: { ledgerId: 10, entryId: -1 }, acked }), {
      format: 'pulsar-ranges',
    }).bytes;
    const reader = new BinaryReader(bytes);
    expect(reader.tag()).toEqual([1, WireType.Varint]);
    expect(reader.int64()).toBe(10n);
    expect(reader.tag()).toEqual([2, WireType.Varint]);
    expect(reader.int64()).toBe(-1n);
    const seen: bigint[][] = [];
    while (reader.pos < reader.len) {
      expect(reader.tag()).toEqual([3, WireType.LengthDelimited]);
      const range = new BinaryReader(reader.bytes());
      const endpoints: bigint[] = [];
      for (const field of [1, 2]) {
        expect(range.tag()).toEqual([field, WireType.LengthDelimited]);
        const position = new BinaryReader(range.bytes());
        expect(position.tag()).toEqual([1, WireType.Varint]);
        endpoints.push(BigInt(position.int64()));
        expect(position.tag()).toEqual([2, WireType.Varint]);
        endpoints.push(BigInt(position.int64()));
      }
      seen.push(endpoints);
    }
    expect(seen).toEqual([
      [10n, -1n, 10n, 2n],
      [10n, 5n, 10n, 6n],
      [11n, 4n, 11n, 9n],
    ]);
  });

  it('long-array writes per-ledger BitSet words in field 6, unpacked', () => {
    const acked = new AckSet();
    for (const entry of [0, 1, 3, 64, 130]) acked.add(7, entry);
    acked.addRange(7, 192, 255);
    acked.add(9, 1);
    const bytes = encodeCursorState(createCursorState({ markDelete: { ledgerId: 7, entryId: -1 }, acked }), {
      format: 'long-array',
    }).bytes;
    const reader = new BinaryReader(bytes);
    reader.tag();
    reader.int64();
    reader.tag();
    reader.int64();
    const ledgers: [bigint, bigint[]][] = [];
    while (reader.pos < reader.len) {
      expect(reader.tag()).toEqual([6, WireType.LengthDelimited]);
      const map = new BinaryReader(reader.bytes());
      expect(map.tag()).toEqual([1, WireType.Varint]);
      const key = BigInt(map.int64());
      const values: bigint[] = [];
      while (map.pos < map.len) {
        expect(map.tag()).toEqual([2, WireType.Varint]);
        values.push(BigInt(map.int64()));
      }
      ledgers.push([key, values]);
    }
    expect(ledgers).toEqual([
      [7n, [0b1011n, 1n, 4n, -1n]],
      [9n, [2n]],
    ]);
  });
});

describe('reading PositionInfo written by others', () => {
  it('accepts fields out of order, unknown fields and packed words', () => {
    const writer = new BinaryWriter();
    writer.tag(6, WireType.LengthDelimited).fork().tag(1, WireType.Varint).int64(4n);
    writer.tag(2, WireType.LengthDelimited).fork().int64(-2n).int64(-1n).join().join();
    writer.tag(99, WireType.LengthDelimited).string('from a newer Pulsar');
    writer.tag(2, WireType.Varint).int64(7n);
    writer.tag(1, WireType.Varint).int64(3n);
    const state = decodeCursorState(writer.finish());
    expect(state.markDelete).toEqual({ ledgerId: 3, entryId: 7 });
    expect([...state.acked.ranges()]).toEqual([{ ledgerId: 4, firstEntryId: 1, lastEntryId: 127 }]);
  });

  it('prefers field 3 over field 6, as Pulsar does', () => {
    const message = create(PositionInfoSchema, {
      ledgerId: 1n,
      entryId: 0n,
      individualDeletedMessages: [
        { lowerEndpoint: { ledgerId: 2n, entryId: 3n }, upperEndpoint: { ledgerId: 2n, entryId: 5n } },
      ],
      individualDeletedMessageRanges: [{ key: 2n, values: [1n] }],
    });
    const state = decodeCursorState(toBinary(PositionInfoSchema, message));
    expect([...state.acked.ranges()]).toEqual([{ ledgerId: 2, firstEntryId: 4, lastEntryId: 5 }]);
  });

  it('keeps the upper ledger part of a range that crosses ledgers', () => {
    const message = create(PositionInfoSchema, {
      ledgerId: 1n,
      entryId: 0n,
      individualDeletedMessages: [
        { lowerEndpoint: { ledgerId: 1n, entryId: 99n }, upperEndpoint: { ledgerId: 2n, entryId: 0n } },
      ],
    });
    const state = decodeCursorState(toBinary(PositionInfoSchema, message));
    expect([...state.acked.ranges()]).toEqual([{ ledgerId: 2, firstEntryId: 0, lastEntryId: 0 }]);
  });

  it('reads a Pulsar batch deleteSet as the indexes still to deliver', () => {
    const message = create(PositionInfoSchema, {
      ledgerId: 1n,
      entryId: 0n,
      batchedEntryDeletionIndexInfo: [{ position: { ledgerId: 1n, entryId: 5n }, deleteSet: [0b10100n] }],
    });
    const state = decodeCursorState(toBinary(PositionInfoSchema, message));
    expect(state.batchAcks.get('1:5')).toEqual({ batchSize: 5, ackedIndexes: [0, 1, 3] });
  });
});

describe('malformed input', () => {
  it('fails with a LedgerlineError, never anything else, on random and truncated bytes', () => {
    const valid = encodeCursorState(
      createCursorState({ acked: AckSet.fromRanges([{ ledgerId: 1, firstEntryId: 3, lastEntryId: 9 }]) }),
      { format: 'compact', compactCompression: 'none' },
    ).bytes;
    const inputs = fc.oneof(
      fc.uint8Array({ minLength: 1, maxLength: 64 }),
      fc.integer({ min: 1, max: valid.length - 1 }).map((cut) => valid.slice(0, cut)),
      fc.tuple(fc.integer({ min: 0, max: valid.length - 1 }), fc.integer({ min: 0, max: 255 })).map(([at, byte]) => {
        const copy = valid.slice();
        copy[at] = byte;
        return copy;
      }),
    );
    fc.assert(
      fc.property(inputs, (bytes) => {
        try {
          decodeCursorState(bytes);
        } catch (error) {
          expect(error).toBeInstanceOf(LedgerlineError);
          expect(['INVALID_ARGUMENT', 'FAILED_PRECONDITION']).toContain((error as LedgerlineError).code);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('refuses to inflate a compact body beyond maxBodyBytes', () => {
    const acked = new AckSet();
    for (let entry = 0; entry < 100_000; entry += 2) acked.add(1, entry);
    const bytes = encodeCursorState(createCursorState({ acked }), {
      format: 'compact',
      compactCompression: 'deflate',
    }).bytes;
    expect(bytes.length).toBeLessThan(200);
    expect(() => decodeCursorState(bytes, { maxBodyBytes: 1000 })).toThrow(
      expect.objectContaining({ reason: 'CURSOR_STATE_MALFORMED' }),
    );
    expect(decodeCursorState(bytes).acked.equals(acked)).toBe(true);
  });

  it('rejects a PositionInfo without its required mark-delete fields', () => {
    expect(() => decodeCursorState(new Uint8Array([0x08, 0x01]))).toThrow(
      expect.objectContaining({ reason: 'CURSOR_STATE_MALFORMED' }),
    );
  });

  it('rejects a compact state from a newer version with FAILED_PRECONDITION', () => {
    expect(() => decodeCursorState(new Uint8Array([0xa7, 0x02, 0x00]))).toThrow(
      expect.objectContaining({ reason: 'CURSOR_STATE_UNSUPPORTED_VERSION', code: 'FAILED_PRECONDITION' }),
    );
  });
});
