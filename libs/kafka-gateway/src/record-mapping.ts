import { Compression, encodeRecordBatch, type KafkaRecord, type RecordBatch } from '@ledgerline/kafka-protocol';
import type { Entry } from '@ledgerline/proto';

/** Marks a message whose Kafka key was not UTF-8: its key is stored base64 so that its bytes survive. */
export const KEY_BASE64_PROPERTY = 'kafka.key.base64';

/** One Kafka record as a Ledgerline batch message (BatchedMessage of topics.proto). */
export interface StoredMessage {
  payload: Uint8Array;
  key?: string;
  properties: Record<string, string>;
  eventTimeMs: bigint;
}

function isUtf8(bytes: Buffer): boolean {
  return Buffer.from(bytes.toString('utf8'), 'utf8').equals(bytes);
}

/**
 * A Kafka record as it is stored: value as payload, key as the message key,
 * headers as properties (UTF-8; a repeated header keeps its last value) and
 * the record's timestamp as event time.
 */
export function storedMessage(batch: RecordBatch, record: KafkaRecord): StoredMessage {
  const properties: Record<string, string> = {};
  for (const header of record.headers) properties[header.key] = header.value?.toString('utf8') ?? '';
  const message: StoredMessage = {
    payload: record.value ?? new Uint8Array(0),
    properties,
    eventTimeMs: batch.baseTimestamp + record.timestampDelta,
  };
  if (record.key !== null) {
    if (isUtf8(record.key)) message.key = record.key.toString('utf8');
    else {
      message.key = record.key.toString('base64');
      properties[KEY_BASE64_PROPERTY] = 'true';
    }
  }
  return message;
}

function recordKey(key: string | undefined, properties: Record<string, string>): Buffer | null {
  if (key === undefined) return null;
  return Buffer.from(key, properties[KEY_BASE64_PROPERTY] === 'true' ? 'base64' : 'utf8');
}

/**
 * One stored entry as one Kafka RecordBatch v2 (uncompressed): its first
 * offset is the batch's base offset, each message's continuous offset its
 * record's offset, event time (or publish time when none) its timestamp.
 */
export function entryRecordBatch(entry: Entry): Buffer {
  const messages = entry.messages;
  const timestamps = messages.map((message) =>
    message.eventTimeMs > 0n
      ? message.eventTimeMs
      : message.publishTimeMs > 0n
        ? message.publishTimeMs
        : entry.brokerTimestampMs,
  );
  const baseTimestamp = timestamps.reduce(
    (min, value) => (value < min ? value : min),
    timestamps[0] ?? entry.brokerTimestampMs,
  );
  const maxTimestamp = timestamps.reduce((max, value) => (value > max ? value : max), baseTimestamp);
  const records: KafkaRecord[] = messages.map((message, index) => {
    const properties = message.properties;
    return {
      offsetDelta: Number(message.offset - entry.firstOffset),
      timestampDelta: (timestamps[index] ?? baseTimestamp) - baseTimestamp,
      key: recordKey(message.key, properties),
      value: Buffer.from(message.payload),
      headers: Object.entries(properties)
        .filter(([name]) => name !== KEY_BASE64_PROPERTY)
        .map(([name, value]) => ({ key: name, value: Buffer.from(value, 'utf8') })),
    };
  });
  return encodeRecordBatch({
    baseOffset: entry.firstOffset,
    partitionLeaderEpoch: 0,
    compression: Compression.NONE,
    timestampType: 0,
    transactional: false,
    control: false,
    lastOffsetDelta: Number(entry.lastOffset - entry.firstOffset),
    baseTimestamp,
    maxTimestamp,
    producerId: -1n,
    producerEpoch: -1,
    baseSequence: -1,
    records,
  });
}
