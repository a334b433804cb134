import { fromBinary, isFieldSet, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import { crc32c } from '@node-rs/crc32';
import { invalidArgument } from '@ledgerline/errors';
import { MessageMetadataSchema, SingleMessageMetadataSchema, type KeyValue } from '@ledgerline/proto';
import {
  CHECKSUM_MAGIC,
  MAX_MESSAGES_PER_BATCH,
  MAX_METADATA_BYTES,
  MAX_SINGLE_METADATA_BYTES,
  MESSAGE_HEADER_BYTES,
} from './limits.js';
import type { DecodedEntryHeader, DecodedMessage, DecodedMessageEntry } from './message.js';
import { MessageFormatReason as R } from './reasons.js';

function fail(reason: string, message: string): never {
  throw invalidArgument(reason, message);
}

function parse<T extends DescMessage>(schema: T, bytes: Uint8Array, what: string): MessageShape<T> {
  try {
    return fromBinary(schema, bytes);
  } catch (error) {
    return fail(R.badMetadata, `${what} is not valid protobuf: ${(error as Error).message}`);
  }
}

function toNumber(value: bigint, what: string): number {
  if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) fail(R.badMetadata, `${what} ${value} is out of range`);
  return Number(value);
}

function propertyMap(list: readonly KeyValue[]): Record<string, string> {
  // No prototype: a property named __proto__ is data like any other.
  const map = Object.create(null) as Record<string, string>;
  for (const { key, value } of list) map[key] = value;
  return map;
}

/**
 * Reads the message part of a stored entry (what encodeMessageEntry wrote, or
 * a Pulsar broker): checks the magic and the CRC32C, then every length before
 * it reads it. Damaged or foreign bytes are INVALID_ARGUMENT with a
 * MESSAGE_* reason, never a crash or a read past the end.
 */
export function decodeMessageEntry(bytes: Uint8Array): DecodedMessageEntry {
  if (!(bytes instanceof Uint8Array)) fail(R.truncated, 'an entry must be bytes');
  if (bytes.length < MESSAGE_HEADER_BYTES) fail(R.truncated, `an entry is at least ${MESSAGE_HEADER_BYTES} bytes`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint16(0) !== CHECKSUM_MAGIC) fail(R.badMagic, 'the entry does not start with the checksum magic 0x0e01');
  const checksum = view.getUint32(2);
  if (crc32c(bytes.subarray(6)) !== checksum) fail(R.checksumMismatch, 'the entry checksum does not match its bytes');
  const metadataSize = view.getUint32(6);
  if (metadataSize > MAX_METADATA_BYTES) fail(R.badMetadata, `metadata of ${metadataSize} bytes exceeds the limit`);
  if (metadataSize > bytes.length - MESSAGE_HEADER_BYTES) fail(R.truncated, 'the metadata runs past the entry');
  const metadataEnd = MESSAGE_HEADER_BYTES + metadataSize;
  const metadata = parse(MessageMetadataSchema, bytes.subarray(MESSAGE_HEADER_BYTES, metadataEnd), 'MessageMetadata');
  const batched = isFieldSet(metadata, MessageMetadataSchema.field.numMessagesInBatch);
  const numMessages = batched ? metadata.numMessagesInBatch : 1;
  if (numMessages < 1 || numMessages > MAX_MESSAGES_PER_BATCH) {
    fail(R.badBatch, `a batch of ${numMessages} messages is outside 1..${MAX_MESSAGES_PER_BATCH}`);
  }
  const header: DecodedEntryHeader = {
    producerName: metadata.producerName,
    sequenceId: metadata.sequenceId,
    highestSequenceId: metadata.sequenceId + BigInt(numMessages - 1),
    publishTimeMs: toNumber(metadata.publishTime, 'publish_time'),
    key: isFieldSet(metadata, MessageMetadataSchema.field.partitionKey) ? metadata.partitionKey : undefined,
    properties: propertyMap(metadata.properties),
    eventTimeMs: toNumber(metadata.eventTime, 'event_time'),
    numMessages,
    batched,
  };
  const payload = bytes.subarray(metadataEnd);
  if (!batched) {
    const message: DecodedMessage = {
      payload,
      key: header.key,
      properties: header.properties,
      eventTimeMs: header.eventTimeMs,
      publishTimeMs: header.publishTimeMs,
      producerName: header.producerName,
      sequenceId: header.sequenceId,
      batchIndex: -1,
    };
    return { header, messages: [message] };
  }
  return { header, messages: decodeBatch(payload, header) };
}

function decodeBatch(payload: Uint8Array, header: DecodedEntryHeader): DecodedMessage[] {
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const messages: DecodedMessage[] = [];
  let at = 0;
  for (let index = 0; index < header.numMessages; index++) {
    if (payload.length - at < 4) fail(R.truncated, `batched message ${index} has no size`);
    const size = view.getUint32(at);
    at += 4;
    if (size > MAX_SINGLE_METADATA_BYTES) fail(R.badBatch, `batched message ${index} declares ${size} metadata bytes`);
    if (size > payload.length - at) fail(R.truncated, `batched message ${index}'s metadata runs past the entry`);
    const single = parse(SingleMessageMetadataSchema, payload.subarray(at, at + size), 'SingleMessageMetadata');
    at += size;
    const payloadSize = single.payloadSize;
    if (payloadSize < 0 || payloadSize > payload.length - at) {
      fail(R.truncated, `batched message ${index}'s payload of ${payloadSize} bytes runs past the entry`);
    }
    const hasSequenceId = isFieldSet(single, SingleMessageMetadataSchema.field.sequenceId);
    messages.push({
      payload: payload.subarray(at, at + payloadSize),
      key: isFieldSet(single, SingleMessageMetadataSchema.field.partitionKey) ? single.partitionKey : header.key,
      properties: propertyMap(single.properties),
      eventTimeMs: toNumber(single.eventTime, 'event_time'),
      publishTimeMs: header.publishTimeMs,
      producerName: header.producerName,
      sequenceId: hasSequenceId ? single.sequenceId : header.sequenceId + BigInt(index),
      batchIndex: index,
    });
    at += payloadSize;
  }
  if (at !== payload.length) fail(R.badBatch, `${payload.length - at} bytes follow the last batched message`);
  return messages;
}
