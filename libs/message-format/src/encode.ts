import { crc32c } from '@node-rs/crc32';
import { invalidArgument } from '@ledgerline/errors';
import {
  CHECKSUM_MAGIC,
  MAX_KEY_BYTES,
  MAX_MESSAGES_PER_BATCH,
  MAX_PRODUCER_NAME_BYTES,
  MAX_PROPERTIES_PER_MESSAGE,
  MAX_PROPERTY_BYTES,
  MAX_SEQUENCE_ID,
  MESSAGE_HEADER_BYTES,
} from './limits.js';
import type { BatchedMessageInput, EntryInput } from './message.js';
import {
  sizeMessageMetadata,
  writeSingleMessageMetadata,
  type MessageMetadataFields,
  type PropertyPair,
  type SizedMessage,
} from './metadata-writer.js';
import { MessageFormatReason as R } from './reasons.js';

function bad(message: string): never {
  throw invalidArgument(R.invalidMessage, message);
}

function checkString(value: unknown, maxBytes: number, what: string): string {
  if (typeof value !== 'string') bad(`${what} must be a string`);
  // A UTF-16 string never takes more than 3 UTF-8 bytes per code unit: skip the exact count when it cannot matter.
  if (value.length * 3 > maxBytes && Buffer.byteLength(value, 'utf8') > maxBytes) {
    bad(`${what} is longer than ${maxBytes} UTF-8 bytes`);
  }
  return value;
}

function checkKey(key: unknown, what: string): string | undefined {
  if (key === undefined || key === null) return undefined;
  return checkString(key, MAX_KEY_BYTES, what);
}

/** Shared by every message without properties: only ever read. */
const NO_PROPERTIES: readonly PropertyPair[] = [];

function toKeyValues(properties: unknown, what: string): readonly PropertyPair[] {
  if (properties === undefined || properties === null) return NO_PROPERTIES;
  if (typeof properties !== 'object' || Array.isArray(properties)) bad(`${what} must be a map of strings`);
  const entries = Object.entries(properties as Record<string, unknown>);
  if (entries.length === 0) return NO_PROPERTIES;
  if (entries.length > MAX_PROPERTIES_PER_MESSAGE) bad(`${what} holds more than ${MAX_PROPERTIES_PER_MESSAGE} entries`);
  return entries.map(([key, value]) => ({
    key: checkString(key, MAX_PROPERTY_BYTES, `${what} name`),
    value: checkString(value, MAX_PROPERTY_BYTES, `${what} '${key.slice(0, 64)}'`),
  }));
}

function checkTime(value: unknown, what: string): bigint {
  if (value === undefined || value === null) return 0n;
  if (typeof value === 'bigint') {
    if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) bad(`${what} must be 0 or a time in ms`);
    return value;
  }
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) bad(`${what} must be 0 or a time in ms`);
  return BigInt(value);
}

function checkPayload(payload: unknown, what: string): Uint8Array {
  if (payload === undefined || payload === null) return new Uint8Array(0);
  if (!(payload instanceof Uint8Array)) bad(`${what} must be bytes`);
  return payload;
}

/** The number of messages an entry input holds: its batch size, or 1. */
export function messageCount(input: Pick<EntryInput, 'messages'>): number {
  const batch = input.messages;
  return batch === undefined || batch.length === 0 ? 1 : batch.length;
}

/**
 * Encodes the message part of a stored entry in Pulsar's layout:
 * `[0x0e01][CRC32C][4-byte metadata size][MessageMetadata][payload]`, where a
 * batch's payload is, per message, `[4-byte size][SingleMessageMetadata][payload]`.
 * The CRC32C covers everything after it (size, metadata and payload), as
 * Pulsar's Commands.serializeMetadataAndPayload computes it. Bad input is
 * INVALID_ARGUMENT / INVALID_MESSAGE naming the field. `allocate` gives the
 * bytes the entry is written into (the writer's leave room for the broker's
 * header in front, so that framing the entry copies nothing again).
 */
export function encodeMessageEntry(input: EntryInput, allocate: (size: number) => Uint8Array = newBytes): Uint8Array {
  if (typeof input !== 'object' || input === null) bad('an entry must be an object');
  const producerName = checkString(input.producerName, MAX_PRODUCER_NAME_BYTES, 'producer name');
  const sequenceId = input.sequenceId;
  if (typeof sequenceId !== 'bigint' || sequenceId < 0n) bad('the sequence id must be a non-negative integer');
  const batch = input.messages ?? [];
  if (!Array.isArray(batch)) bad('messages must be a list');
  if (batch.length > MAX_MESSAGES_PER_BATCH) bad(`a batch holds at most ${MAX_MESSAGES_PER_BATCH} messages`);
  const count = Math.max(batch.length, 1);
  const highestSequenceId = sequenceId + BigInt(count - 1);
  if (highestSequenceId > MAX_SEQUENCE_ID) bad(`sequence ids go up to ${MAX_SEQUENCE_ID}`);
  if (!Number.isSafeInteger(input.publishTimeMs) || input.publishTimeMs < 0) bad('the publish time must be ms');
  const metadata: MessageMetadataFields = {
    producerName,
    sequenceId,
    publishTime: BigInt(input.publishTimeMs),
    properties: batch.length === 0 ? toKeyValues(input.properties, 'properties') : NO_PROPERTIES,
  };
  const key = checkKey(input.key, 'key');
  if (key !== undefined) metadata.partitionKey = key;
  if (batch.length === 0) {
    const eventTime = checkTime(input.eventTimeMs, 'event time');
    if (eventTime !== 0n) metadata.eventTime = eventTime;
    return frame(sizeMessageMetadata(metadata), [checkPayload(input.payload, 'payload')], allocate);
  }
  metadata.numMessagesInBatch = batch.length;
  if (count > 1) metadata.highestSequenceId = highestSequenceId;
  const parts: Uint8Array[] = [];
  batch.forEach((message, index) => parts.push(...batchedParts(message, sequenceId + BigInt(index), index)));
  return frame(sizeMessageMetadata(metadata), parts, allocate);
}

/** `[4-byte size][SingleMessageMetadata][payload]` of one batched message. */
function batchedParts(message: BatchedMessageInput, sequenceId: bigint, index: number): Uint8Array[] {
  if (typeof message !== 'object' || message === null) bad(`messages[${index}] must be an object`);
  const payload = checkPayload(message.payload, `messages[${index}].payload`);
  const properties = toKeyValues(message.properties, `messages[${index}].properties`);
  const key = checkKey(message.key, `messages[${index}].key`);
  const eventTime = checkTime(message.eventTimeMs, `messages[${index}].eventTimeMs`);
  const metadataBytes = writeSingleMessageMetadata({
    properties,
    ...(key === undefined ? {} : { partitionKey: key }),
    payloadSize: payload.length,
    ...(eventTime === 0n ? {} : { eventTime }),
    sequenceId,
  });
  // Written byte by byte: reading `.buffer` of a 4-byte array moves it off V8's heap, which cost more than the rest.
  const length = metadataBytes.length;
  const size = Uint8Array.of(length >>> 24, (length >>> 16) & 0xff, (length >>> 8) & 0xff, length & 0xff);
  return [size, metadataBytes, payload];
}

const newBytes = (size: number): Uint8Array => new Uint8Array(size);

function frame(
  metadata: SizedMessage,
  payloadParts: readonly Uint8Array[],
  allocate: (size: number) => Uint8Array,
): Uint8Array {
  let payloadBytes = 0;
  for (const part of payloadParts) payloadBytes += part.length;
  const size = MESSAGE_HEADER_BYTES + metadata.size + payloadBytes;
  const bytes = allocate(size);
  if (bytes.length !== size) bad(`the entry's bytes must be ${size} long, got ${bytes.length}`);
  // Written byte by byte: a DataView per entry cost more than these few stores.
  bytes[0] = CHECKSUM_MAGIC >>> 8;
  bytes[1] = CHECKSUM_MAGIC & 0xff;
  writeUint32(bytes, 6, metadata.size);
  // The metadata is written where it goes: no buffer of its own, no copy of it.
  let at = metadata.writeTo(bytes, MESSAGE_HEADER_BYTES);
  for (const part of payloadParts) {
    bytes.set(part, at);
    at += part.length;
  }
  writeUint32(bytes, 2, crc32c(bytes.subarray(6)));
  return bytes;
}

function writeUint32(bytes: Uint8Array, at: number, value: number): void {
  bytes[at] = value >>> 24;
  bytes[at + 1] = (value >>> 16) & 0xff;
  bytes[at + 2] = (value >>> 8) & 0xff;
  bytes[at + 3] = value & 0xff;
}
