import { LedgerlineError } from '@ledgerline/errors';
import { Compression, encodeRecordBatch, type KafkaRecord, type RecordBatch } from '@ledgerline/kafka-protocol';
import { KEPT_TIMESTAMP_PROPERTY } from '@ledgerline/message-format';
import type { Entry } from '@ledgerline/proto';
import { GatewayReason } from './reasons.js';

/** Marks a message whose Kafka key was not UTF-8: its key is stored base64 so that its bytes survive. */
export const KEY_BASE64_PROPERTY = 'kafka.key.base64';
/**
 * Keeps a Kafka timestamp that event time cannot hold: -1 (Kafka's
 * NO_TIMESTAMP) and 0, since event time 0 means "none" and reads back as the
 * publish time. message-format's, whose messageTimesMs reads it for a lookup
 * by event time.
 */
export const TIMESTAMP_PROPERTY = KEPT_TIMESTAMP_PROPERTY;
/**
 * Marks a record whose value was null (Kafka's tombstone), which the payload
 * alone, empty, cannot tell from an empty value.
 */
export const NULL_VALUE_PROPERTY = 'kafka.value.null';
/**
 * Keeps a record's headers exactly, when properties (one value per name, text)
 * cannot: a repeated name, a null value, or a value that is not UTF-8. JSON, a
 * list of [name, value in base64 or null] in the record's order. The
 * properties still hold each name's last value as text, as they always did,
 * so a Pulsar-style reader sees what it saw before.
 */
export const HEADERS_PROPERTY = 'kafka.headers';

/** Kafka's RecordBatch.NO_TIMESTAMP: a record without a timestamp, which a CreateTime topic keeps as it is. */
const NO_TIMESTAMP = -1n;
const MAX_EVENT_TIME_MS = BigInt(Number.MAX_SAFE_INTEGER);
/** Properties the gateway keeps for itself: never answered as headers. */
const GATEWAY_PROPERTIES = new Set([KEY_BASE64_PROPERTY, TIMESTAMP_PROPERTY, NULL_VALUE_PROPERTY, HEADERS_PROPERTY]);

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

/** Header values as properties hold them (text, the last of a repeated name), and the exact list when they cannot. */
function headerProperties(headers: KafkaRecord['headers']): Record<string, string> {
  const properties: Record<string, string> = {};
  let exact = true;
  for (const header of headers) {
    if (header.key in properties || header.value === null || !isUtf8(header.value)) exact = false;
    properties[header.key] = header.value?.toString('utf8') ?? '';
  }
  if (!exact) {
    const list = headers.map((header) => [header.key, header.value?.toString('base64') ?? null]);
    properties[HEADERS_PROPERTY] = JSON.stringify(list);
  }
  return properties;
}

/**
 * A Kafka record as it is stored: value as payload (a null one empty, with
 * NULL_VALUE_PROPERTY), key as the message key, headers as properties (UTF-8,
 * the last value of a repeated name; HEADERS_PROPERTY when that loses
 * anything) and the record's timestamp as event time (-1 and 0, which event
 * time cannot hold, as TIMESTAMP_PROPERTY). INVALID_KAFKA_TIMESTAMP for a
 * timestamp Kafka would not keep either.
 */
export function storedMessage(batch: RecordBatch, record: KafkaRecord): StoredMessage {
  const properties = headerProperties(record.headers);
  if (record.value === null) properties[NULL_VALUE_PROPERTY] = 'true';
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

/**
 * A stored message's Kafka record timestamp: its event time, else the
 * timestamp kept in TIMESTAMP_PROPERTY (-1 or 0), else its publish time, else
 * its entry's broker time (message-format's messageTimeMs, over the contract's
 * types).
 */
export function recordTimestamp(entry: Entry, message: Entry['messages'][number]): bigint {
  if (message.eventTimeMs > 0n) return message.eventTimeMs;
  const kept = message.properties[TIMESTAMP_PROPERTY];
  if (kept === '-1' || kept === '0') return BigInt(kept);
  return message.publishTimeMs > 0n ? message.publishTimeMs : entry.brokerTimestampMs;
}

/**
 * The largest timestamp of a batch's records (-1 when none has one), from
 * the records themselves: as Kafka's broker does for a CreateTime topic, the
 * batch header's maxTimestamp, which the producer wrote, is not trusted.
 */
export function largestRecordTimestamp(batch: RecordBatch): bigint {
  let largest = NO_TIMESTAMP;
  for (const record of batch.records) {
    const timestampMs = batch.baseTimestamp + record.timestampDelta;
    if (timestampMs > largest) largest = timestampMs;
  }
  return largest;
}

/**
 * HEADERS_PROPERTY's list, or undefined when the property is not one: an SDK
 * producer may set any property, and a fetch must answer all the same.
 */
function keptHeaders(kept: string | undefined): KafkaRecord['headers'] | undefined {
  if (kept === undefined) return undefined;
  let list: unknown;
  try {
    list = JSON.parse(kept);
  } catch {
    return undefined;
  }
  const isHeader = (item: unknown): item is [string, string | null] =>
    Array.isArray(item) &&
    item.length === 2 &&
    typeof item[0] === 'string' &&
    (item[1] === null || typeof item[1] === 'string');
  if (!Array.isArray(list) || !list.every(isHeader)) return undefined;
  return list.map(([key, value]) => ({ key, value: value === null ? null : Buffer.from(value, 'base64') }));
}

/** The headers a record was produced with: the exact list when one was kept, else the properties not the gateway's. */
function recordHeaders(properties: Record<string, string>): KafkaRecord['headers'] {
  const kept = keptHeaders(properties[HEADERS_PROPERTY]);
  if (kept !== undefined) return kept;
  return Object.entries(properties)
    .filter(([name]) => !GATEWAY_PROPERTIES.has(name))
    .map(([name, value]) => ({ key: name, value: Buffer.from(value, 'utf8') }));
}

function recordKey(key: string | undefined, properties: Record<string, string>): Buffer | null {
  if (key === undefined) return null;
  return Buffer.from(key, properties[KEY_BASE64_PROPERTY] === 'true' ? 'base64' : 'utf8');
}

/** The bytes as a Buffer over the same memory: encodeRecordBatch copies them into the batch, once. */
function bufferView(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * One stored entry as one Kafka RecordBatch v2 (uncompressed): its first
 * offset is the batch's base offset, each message's continuous offset its
 * record's offset, event time (or publish time when none) its timestamp; a
 * Kafka record stored without a timestamp answers -1, as Kafka does.
 */
export function entryRecordBatch(entry: Entry): Buffer {
  const messages = entry.messages;
  const timestamps = messages.map((message) => recordTimestamp(entry, message));
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
      value: properties[NULL_VALUE_PROPERTY] === 'true' ? null : bufferView(message.payload),
      headers: recordHeaders(properties),
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
