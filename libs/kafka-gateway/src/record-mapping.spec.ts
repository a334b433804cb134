import { create } from '@bufbuild/protobuf';
import { Compression, decodeRecordBatches, type KafkaRecord, type RecordBatch } from '@ledgerline/kafka-protocol';
import { EntrySchema, MessageSchema, type Entry } from '@ledgerline/proto';
import { kafkaErrorOf } from './kafka-errors.js';
import { GatewayReason } from './reasons.js';
import { KEPT_TIMESTAMP_PROPERTY } from '@ledgerline/message-format';
import {
  entryRecordBatch,
  HEADERS_PROPERTY,
  largestRecordTimestamp,
  NULL_VALUE_PROPERTY,
  storedMessage,
  TIMESTAMP_PROPERTY,
  type StoredMessage,
} from './record-mapping.js';

function batchAt(baseTimestamp: bigint): RecordBatch {
  return {
    baseOffset: 0n,
    partitionLeaderEpoch: 0,
    compression: Compression.NONE,
    timestampType: 0,
    transactional: false,
    control: false,
    lastOffsetDelta: 0,
    baseTimestamp,
    maxTimestamp: baseTimestamp,
    producerId: -1n,
    producerEpoch: -1,
    baseSequence: -1,
    records: [],
  };
}

const record = (timestampDelta = 0n): KafkaRecord => ({
  offsetDelta: 0,
  timestampDelta,
  key: null,
  value: Buffer.from('v'),
  headers: [],
});

describe('storedMessage timestamps', () => {
  it('stores a time as event time, and -1 (none) and 0, which event time cannot hold, as a property', () => {
    expect(storedMessage(batchAt(1_700_000_000_000n), record(5n))).toMatchObject({
      eventTimeMs: 1_700_000_000_005n,
      properties: {},
    });
    expect(storedMessage(batchAt(-1n), record())).toMatchObject({
      eventTimeMs: 0n,
      properties: { [TIMESTAMP_PROPERTY]: '-1' },
    });
    expect(storedMessage(batchAt(-1n), record(1n))).toMatchObject({
      eventTimeMs: 0n,
      properties: { [TIMESTAMP_PROPERTY]: '0' },
    });
  });

  it("refuses other negative times and times past event time's range with INVALID_TIMESTAMP", () => {
    for (const [base, delta] of [
      [-2n, 0n],
      [-1n, -5n],
      [BigInt(Number.MAX_SAFE_INTEGER), 1n],
    ] as const) {
      let thrown: unknown;
      try {
        storedMessage(batchAt(base), record(delta));
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ reason: GatewayReason.INVALID_KAFKA_TIMESTAMP });
      expect(kafkaErrorOf(thrown)).toBe(32);
    }
  });
});

describe('largestRecordTimestamp', () => {
  it("is the largest of the records' own timestamps, not the batch header's, and -1 when none has one", () => {
    const batch = { ...batchAt(1_600_000_000_000n), maxTimestamp: 9_999_999_999_999n };
    batch.records = [record(5n), record(-3n), record(2n)];
    expect(largestRecordTimestamp(batch)).toBe(1_600_000_000_005n);
    expect(largestRecordTimestamp({ ...batchAt(-1n), records: [record(), record()] })).toBe(-1n);
    expect(largestRecordTimestamp({ ...batchAt(-1n), records: [record(), record(1n)] })).toBe(0n);
  });

  it("keeps -1 and 0 in the property a lookup by event time reads (message-format's)", () => {
    expect(TIMESTAMP_PROPERTY).toBe(KEPT_TIMESTAMP_PROPERTY);
  });
});

/** Stored messages as the owner hands them back: one entry from offset 0. */
function entryOf(messages: readonly StoredMessage[]): Entry {
  return create(EntrySchema, {
    firstOffset: 0n,
    lastOffset: BigInt(messages.length - 1),
    brokerTimestampMs: 1_700_000_000_000n,
    numMessages: messages.length,
    messages: messages.map((message, index) =>
      create(MessageSchema, { ...message, offset: BigInt(index), batchIndex: index }),
    ),
  });
}

/** Records through storage and back out as Fetch answers them. */
function roundTrip(records: readonly KafkaRecord[]): KafkaRecord[] {
  const batch = batchAt(1_700_000_000_000n);
  const stored = records.map((one) => storedMessage(batch, one));
  return decodeRecordBatches(entryRecordBatch(entryOf(stored)))[0]!.records.map((one) => ({ ...one }));
}

const withValue = (value: Buffer | null, headers: KafkaRecord['headers'] = []): KafkaRecord => ({
  ...record(),
  value,
  headers,
});
const header = (key: string, value: string | null): { key: string; value: Buffer | null } => ({
  key,
  value: value === null ? null : Buffer.from(value),
});

describe('null values and headers through storage (librdkafka 0070, 0073, 0085)', () => {
  it('keeps a null value (a tombstone) apart from an empty one', () => {
    const [tombstone, empty, text] = roundTrip([
      withValue(null),
      withValue(Buffer.alloc(0)),
      withValue(Buffer.from('v')),
    ]);
    expect([tombstone!.value, empty!.value, text!.value]).toEqual([null, Buffer.alloc(0), Buffer.from('v')]);
  });

  it('stores a tombstone as an empty payload marked null, no header the client sees', () => {
    expect(storedMessage(batchAt(1n), withValue(null))).toMatchObject({
      payload: new Uint8Array(0),
      properties: { [NULL_VALUE_PROPERTY]: 'true' },
    });
  });

  it('keeps repeated header names, their order and null header values, where properties hold the last value', () => {
    const headers = [
      header('multi', 'a'),
      header('single', 'x'),
      header('multi', null),
      header('multi', ''),
      header('z', null),
    ];
    const [read] = roundTrip([withValue(Buffer.from('v'), headers)]);
    expect(read!.headers).toEqual(headers);
    // A Pulsar-style reader sees the properties it saw before: one text value per name, the last one.
    const stored = storedMessage(batchAt(1n), withValue(Buffer.from('v'), headers));
    expect(stored.properties).toMatchObject({ multi: '', single: 'x', z: '' });
  });

  it('keeps a header value that is not UTF-8 byte for byte', () => {
    const binary = { key: 'raw', value: Buffer.from([0xff, 0x00, 0xfe]) };
    expect(roundTrip([withValue(Buffer.from('v'), [binary])])[0]!.headers).toEqual([binary]);
  });

  it('adds nothing to headers that properties already hold exactly', () => {
    const stored = storedMessage(batchAt(1n), withValue(Buffer.from('v'), [header('a', '1'), header('b', '2')]));
    expect(stored.properties).toEqual({ a: '1', b: '2' });
    expect(roundTrip([withValue(Buffer.from('v'), [header('a', '1'), header('b', '2')])])[0]!.headers).toEqual([
      header('a', '1'),
      header('b', '2'),
    ]);
  });

  it('answers the properties as headers when a kafka.headers property is not a header list (an SDK producer set it)', () => {
    for (const garbage of ['not json', '{"a":1}', '[["k",1]]', '[["k"]]']) {
      const message: StoredMessage = {
        payload: new Uint8Array([1]),
        properties: { [HEADERS_PROPERTY]: garbage, k: 'v' },
        eventTimeMs: 1n,
      };
      expect(decodeRecordBatches(entryRecordBatch(entryOf([message])))[0]!.records[0]!.headers).toEqual([
        header('k', 'v'),
      ]);
    }
  });
});
