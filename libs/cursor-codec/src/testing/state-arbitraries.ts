// fast-check generators of cursor states, shared by the spec files.
import fc from 'fast-check';
import { AckSet } from '../ack-set.js';
import { REGION_SIZE } from '../container.js';
import { remainingBatchIndexes, type BatchAck, type CursorState } from '../cursor-state.js';
import { positionKey } from '../position.js';

const entryId = fc.oneof(
  fc.integer({ min: 0, max: 300 }),
  fc.integer({ min: REGION_SIZE - 40, max: REGION_SIZE + 40 }),
  fc.integer({ min: 5 * REGION_SIZE - 10, max: 5 * REGION_SIZE + 10 }),
);

const range = fc.record({
  ledgerId: fc.oneof(fc.integer({ min: 0, max: 6 }), fc.constant(2 ** 40)),
  first: entryId,
  length: fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 3 * REGION_SIZE })),
});

/** An AckSet of ranges with holes, crossing region boundaries, some spanning whole regions. */
export const ackSetArbitrary = fc.array(range, { maxLength: 25 }).map((ranges) => {
  const set = new AckSet();
  for (const { ledgerId, first, length } of ranges) set.addRange(ledgerId, first, first + length - 1);
  return set;
});

/** A set with many alternating holes so that regions become bitmaps. */
export const denseAckSetArbitrary = fc
  .record({
    start: fc.integer({ min: 0, max: 100 }),
    count: fc.integer({ min: 2100, max: 5000 }),
    step: fc.constantFrom(2, 3),
  })
  .map(({ start, count, step }) => {
    const set = new AckSet();
    for (let index = 0; index < count; index++) set.add(3, start + index * step);
    return set;
  });

const batchAck: fc.Arbitrary<BatchAck> = fc
  .integer({ min: 1, max: 200 })
  .chain((batchSize) =>
    fc
      .uniqueArray(fc.integer({ min: 0, max: batchSize - 1 }), { maxLength: batchSize - 1 })
      .map((indexes) => ({ batchSize, ackedIndexes: indexes.sort((a, b) => a - b) })),
  );

const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });

export function cursorStateArbitrary(options: {
  cursorProperties: boolean;
  dense?: boolean;
}): fc.Arbitrary<CursorState> {
  return fc.record({
    markDelete: fc.record({ ledgerId: fc.integer({ min: -1, max: 6 }), entryId: fc.integer({ min: -1, max: 500 }) }),
    acked: options.dense === true ? denseAckSetArbitrary : ackSetArbitrary,
    batchAcks: fc
      .array(fc.tuple(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0, max: 1000 }), batchAck), { maxLength: 4 })
      .map((entries) => new Map(entries.map(([ledger, entry, batch]) => [positionKey(ledger, entry), batch]))),
    properties: fc
      .array(fc.tuple(fc.string({ maxLength: 12 }), fc.oneof(int64, fc.integer())), { maxLength: 4 })
      .map((entries) => new Map<string, bigint | number>(entries)),
    cursorProperties: options.cursorProperties
      ? fc
          .array(fc.tuple(fc.string({ maxLength: 10 }), fc.string({ maxLength: 20 })), { maxLength: 3 })
          .map((e) => new Map(e))
      : fc.constant(new Map<string, string>()),
  });
}

/** A comparable view of a state; Pulsar formats keep only what Pulsar keeps. */
export function stateView(state: CursorState, pulsar: boolean): unknown {
  return {
    markDelete: state.markDelete,
    acked: [...state.acked.ranges()],
    batchAcks: [...state.batchAcks]
      .map(([key, batch]) => [key, pulsar ? remainingBatchIndexes(batch) : batch])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    properties: [...state.properties].map(([name, value]) => [name, BigInt(value)]),
    cursorProperties: pulsar ? [] : [...state.cursorProperties],
  };
}
