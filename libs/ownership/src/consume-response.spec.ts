import { create, equals, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { ManagedLedgerEntry } from '@ledgerline/managed-ledger';
import { encodeMessageEntry, type EntryInput } from '@ledgerline/message-format';
import { ConsumeResponseSchema, MessageSchema } from '@ledgerline/proto';
import type { Delivery } from '@ledgerline/subscriptions';
import fc from 'fast-check';
import { encodeEntries, entryDelivery } from './consume-response.js';
import { entryContents, entryMessage } from './proto-mapping.js';
import { consumeResponseOf } from './testing/consume-responses.js';
import { writerEntry, type WriterEntry } from './writer-entry.js';

const text = fc.string({ maxLength: 12, unit: 'grapheme' });
const properties = fc
  .array(fc.tuple(fc.oneof(text, fc.constantFrom('1', '20', 'a', '__proto__')), text), { maxLength: 4 })
  .map((pairs) => Object.fromEntries(pairs));
const time = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2 ** 48 }));
const payload = fc.uint8Array({ maxLength: 64 });
const key = fc.option(text, { nil: undefined });

const single = fc.record({
  producerName: text,
  sequenceId: fc.bigInt({ min: 0n, max: (1n << 63n) - 1n }),
  publishTimeMs: time,
  payload,
  key,
  properties,
  eventTimeMs: time,
});
const batch = fc.record({
  producerName: text,
  sequenceId: fc.bigInt({ min: 0n, max: 1n << 53n }),
  publishTimeMs: time,
  key,
  messages: fc.array(fc.record({ payload, key, properties, eventTimeMs: time }), { minLength: 1, maxLength: 5 }),
});

/** Stored bytes: an entry as the owner encodes it, or one whose checksum no longer matches (handed out raw). */
const storedBytes: fc.Arbitrary<{ bytes: Uint8Array; numMessages: number }> = fc.oneof(
  fc.oneof(single, batch).map((input: EntryInput) => ({
    bytes: encodeMessageEntry(input),
    numMessages: input.messages?.length ?? 1,
  })),
  fc.tuple(single, fc.nat()).map(([input, at]) => {
    const bytes = encodeMessageEntry(input).slice();
    bytes[6 + (at % (bytes.length - 6))]! ^= 0xff;
    return { bytes, numMessages: 1 };
  }),
);

const position = fc.integer({ min: 0, max: 2 ** 40 });
const storedEntry: fc.Arbitrary<ManagedLedgerEntry> = fc
  .record({ stored: storedBytes, ledgerId: position, entryId: position, firstOffset: time, broker: time })
  .map(({ stored, ledgerId, entryId, firstOffset, broker }) => ({
    position: { ledgerId, entryId },
    payload: stored.bytes,
    firstOffset,
    lastOffset: firstOffset + stored.numMessages - 1,
    numMessages: stored.numMessages,
    brokerTimestampMs: broker,
  }));
const delivery: fc.Arbitrary<Delivery<WriterEntry>> = fc
  .record({
    stored: storedEntry,
    redeliveryCount: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 100_000 })),
    batchIndexes: fc.option(fc.uniqueArray(fc.integer({ min: -1, max: 5 }), { maxLength: 4 }), { nil: undefined }),
  })
  .map(({ stored, redeliveryCount, batchIndexes }) => ({
    entry: writerEntry(stored),
    redeliveryCount,
    batchIndexes,
  }));

/**
 * The reference the hand encoding is checked against: the Entry message for
 * a delivery as objects, the messages of the entry the consumer still has to
 * get (as a Fetch maps a stored entry), which is what owners once sent.
 */
function entryResponse(delivery: Delivery<WriterEntry>) {
  const wanted = delivery.batchIndexes === undefined ? undefined : new Set(delivery.batchIndexes);
  const skip = wanted === undefined ? undefined : (batchIndex: number) => !wanted.has(batchIndex);
  return entryMessage(delivery.entry.stored, delivery.redeliveryCount, skip);
}

/** The response of `deliveries` built as objects and encoded by reflection, as owners sent it before. */
function byReflection(deliveries: Delivery<WriterEntry>[]) {
  const [first, ...more] = deliveries.map(entryResponse);
  return create(ConsumeResponseSchema, { event: { case: 'entry', value: first! }, moreEntries: more });
}

describe('hand-encoded ConsumeResponse entries', () => {
  it('are byte for byte what encoding the same response by reflection gives, and decode to it', () => {
    fc.assert(
      fc.property(fc.array(delivery, { minLength: 1, maxLength: 4 }), (deliveries) => {
        const encoded = encodeEntries(deliveries.map(entryDelivery));
        expect(encoded.schema).toBe(ConsumeResponseSchema);
        const expected = byReflection(deliveries);
        expect(Buffer.from(encoded.bytes).equals(toBinary(ConsumeResponseSchema, expected))).toBe(true);
        expect(equals(ConsumeResponseSchema, fromBinary(ConsumeResponseSchema, encoded.bytes), expected)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('counts the messages and payload bytes a delivery carries, acknowledged batch indexes left out', () => {
    const stored = storedOf(
      encodeMessageEntry({
        producerName: 'p',
        sequenceId: 1n,
        publishTimeMs: 1,
        messages: [{ payload: new Uint8Array(3) }, { payload: new Uint8Array(5) }, { payload: new Uint8Array(7) }],
      }),
      3,
    );
    const all = entryDelivery({ entry: writerEntry(stored), redeliveryCount: 0, batchIndexes: undefined });
    expect([all.messageCount, all.payloadBytes]).toEqual([3, 15]);
    const rest = entryDelivery({ entry: writerEntry(stored), redeliveryCount: 1, batchIndexes: [2, 0] });
    expect([rest.messageCount, rest.payloadBytes]).toEqual([2, 10]);
  });
});

function storedOf(bytes: Uint8Array, numMessages: number): ManagedLedgerEntry {
  return {
    position: { ledgerId: 4, entryId: 9 },
    payload: bytes,
    firstOffset: 100,
    lastOffset: 100 + numMessages - 1,
    numMessages,
    brokerTimestampMs: 5,
  };
}

describe('writerEntry: one decoded form per stored entry', () => {
  const entryOf = (payloadBytes: number) =>
    encodeMessageEntry({ producerName: 'p', sequenceId: 1n, publishTimeMs: 1, payload: new Uint8Array(payloadBytes) });
  const bytes = entryOf(1024);

  it('gives every reader of the same stored entry object the same decoded entry', () => {
    const stored = storedOf(bytes, 1);
    const first = writerEntry(stored);
    expect(writerEntry(stored)).toBe(first);
    expect(writerEntry(stored).wire).toBe(first.wire);
    // Another object at the same position (a read the cache did not answer) is decoded on its own.
    expect(writerEntry({ ...stored })).not.toBe(first);
  });

  it('hands a corrupt entry out raw to every reader, as one keyless message of its stored bytes', () => {
    const corrupt = bytes.slice();
    corrupt[corrupt.length - 1]! ^= 0x01;
    const stored = storedOf(corrupt, 1);
    const entry = writerEntry(stored);
    expect(writerEntry(stored)).toBe(entry);
    expect(entry.key).toBeUndefined();
    expect(entry.wire.count).toBe(1);
    expect(entry.wire.payload(0)).toEqual(corrupt);
    expect([...entry.wire.batchIndexes]).toEqual([-1]);
    const sent = consumeResponseOf(
      encodeEntries([entryDelivery({ entry, redeliveryCount: 0, batchIndexes: undefined })]),
    );
    const raw = [{ payload: corrupt, offset: 100n, batchIndex: -1 }];
    expect(entryContents(stored).messages).toEqual(raw);
    expect(sent.event.case === 'entry' && sent.event.value.messages).toEqual(raw.map((m) => create(MessageSchema, m)));
  });

  it('keeps no form that would cost more than its entry does in the cache: each read makes it again', () => {
    const stored = storedOf(entryOf(8), 1);
    const first = writerEntry(stored);
    const again = writerEntry(stored);
    expect(again).not.toBe(first);
    expect(again.wire.tail(0)).toEqual(first.wire.tail(0));
    expect(again.wire.payload(0)).toEqual(new Uint8Array(8));
  });
});
