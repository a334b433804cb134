import { LedgerlineError } from '@ledgerline/errors';
import { Compression, encodeRecordBatch, type KafkaRecord, type RecordBatch } from '@ledgerline/kafka-protocol';
import type { Entry } from '@ledgerline/proto';
import { GatewayReason } from './reasons.js';

/** Marks a message whose Kafka key was not UTF-8: its key is stored base64 so that its bytes survive. */
export const KEY_BASE64_PROPERTY = 'kafka.key.base64';
/**
 * Keeps a Kafka timestamp that event time cannot hold: -1 (Kafka's
 * NO_TIMESTAMP) and 0, since event time 0 means "none" and reads back as the
 * publish time.
 */
export const TIMESTAMP_PROPERTY = 'kafka.timestamp';

/** Kafka's RecordBatch.NO_TIMESTAMP: a record without a timestamp, which a CreateTime topic keeps as it is. */
const NO_TIMESTAMP = -1n;
const MAX_EVENT_TIME_MS = BigInt(Number.MAX_SAFE_INTEGER);
/** Properties the gateway keeps for itself: never answered as headers. */
const GATEWAY_PROPERTIES = new Set([KEY_BASE64_PROPERTY, TIMESTAMP_PROPERTY]);

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
 * the record's timestamp as event time (-1 and 0, which event time cannot
 * hold, as TIMESTAMP_PROPERTY). INVALID_KAFKA_TIMESTAMP for a timestamp Kafka
 * would not keep either.
 */
export function storedMessage(batch: RecordBatch, record: KafkaRecord): StoredMessage {
  const properties: Record<string, string> = {};
  for (const header of record.headers) properties[header.key] = header.value?.toString('utf8') ?? '';
  const timestampMs = batch.baseTimestamp + record.timestampDelta;
  // Kafka's LogValidator lets a CreateTime record have no timestamp (-1) and keeps it so; other negative times, and
  // times event time cannot hold, are refused as Kafka refuses a timestamp it will not take.
  if (timestampMs < NO_TIMESTAMP || timestampMs > MAX_EVENT_TIME_MS) {
    throw new LedgerlineError(
      'INVALID_ARGUMENT',
      GatewayReason.INVALID_KAFKA_TIMESTAMP,
      `record timestamp ${timestampMs}: give -1 (none) or a time from 0 to ${MAX_EVENT_TIME_MS} ms`,
    );
  }
  if (timestampMs <= 0n) properties[TIMESTAMP_PROPERTY] = String(timestampMs);
  const message: StoredMessage = {
    payload: record.value ?? new Uint8Array(0),
    properties,
    eventTimeMs: timestampMs > 0n ? timestampMs : 0n,
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
 * record's offset, event time (or publish time when none) its timestamp; a
 * Kafka record stored without a timestamp answers -1, as Kafka does.
 */
export function entryRecordBatch(entry: Entry): Buffer {
  const messages = entry.messages;
  const timestamps = messages.map((message) => {
    if (message.eventTimeMs > 0n) return message.eventTimeMs;
    const kept = message.properties[TIMESTAMP_PROPERTY];
    if (kept === '-1' || kept === '0') return BigInt(kept);
    return message.publishTimeMs > 0n ? message.publishTimeMs : entry.brokerTimestampMs;
  });
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
        .filter(([name]) => !GATEWAY_PROPERTIES.has(name))
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
