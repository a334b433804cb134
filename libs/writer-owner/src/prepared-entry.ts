import { LedgerlineError } from '@ledgerline/errors';
import { encodeMessageEntry, type EntryInput } from '@ledgerline/message-format';
import type { AppendOptions } from '@ledgerline/managed-ledger';
import { allocateWithEntryHeadroom } from '@ledgerline/offset-index';
import { OwnerReason } from '@ledgerline/ownership';
import type { PublishMessage } from '@ledgerline/proto';
import { MAX_DEDUP_PRODUCER_NAME_LENGTH } from './deduplication.js';
import { WriterReason } from './reasons.js';

/** Turns a publish request into the codec's input; the owner stamps the publish time. */
export function entryInput(message: PublishMessage, publishTimeMs: number): EntryInput {
  return {
    producerName: message.producerName,
    sequenceId: message.sequenceId,
    publishTimeMs,
    payload: message.payload,
    key: message.key,
    properties: message.properties,
    eventTimeMs: message.eventTimeMs,
    messages: message.messages,
  };
}

/** Encodes and checks a publish request's entry; INVALID_ARGUMENT or RESOURCE_EXHAUSTED before any work is done. */
export function prepareEntry(message: PublishMessage, publishTimeMs: number, maxMessageSizeBytes: number): Uint8Array {
  if (message.producerName.length > MAX_DEDUP_PRODUCER_NAME_LENGTH) {
    throw new LedgerlineError(
      'INVALID_ARGUMENT',
      OwnerReason.INVALID_REQUEST,
      `a producer name is at most ${MAX_DEDUP_PRODUCER_NAME_LENGTH} characters`,
    );
  }
  checkMaxEventTime(message);
  // With room for the broker's header in front: the managed ledger frames it without a second copy.
  const bytes = encodeMessageEntry(entryInput(message, publishTimeMs), allocateWithEntryHeadroom);
  if (bytes.length > maxMessageSizeBytes) {
    throw new LedgerlineError(
      'RESOURCE_EXHAUSTED',
      WriterReason.MESSAGE_TOO_LARGE,
      `the entry takes ${bytes.length} bytes; this topic accepts at most ${maxMessageSizeBytes}`,
      { details: { sizeBytes: String(bytes.length), maxMessageSizeBytes: String(maxMessageSizeBytes) } },
    );
  }
  return bytes;
}

/**
 * The entry's largest event time as its publisher gave it
 * (PublishMessage.max_event_time_ms), for the managed ledger to store with
 * the entry; -1 (none of its messages has a time) is stored as 0, the
 * smallest time a lookup asks for. The owner takes it as given rather than
 * decode every message of the entry to find it: the publisher built the
 * messages and knows it (a Kafka batch's largest record timestamp).
 */
export function appendOptions(message: PublishMessage): AppendOptions | undefined {
  const given = message.maxEventTimeMs;
  return given === undefined ? undefined : { maxEventTimeMs: given < 0n ? 0 : Number(given) };
}

function checkMaxEventTime(message: PublishMessage): void {
  const given = message.maxEventTimeMs;
  if (given !== undefined && (given < -1n || given > BigInt(Number.MAX_SAFE_INTEGER))) {
    throw new LedgerlineError(
      'INVALID_ARGUMENT',
      OwnerReason.INVALID_REQUEST,
      `max_event_time_ms ${given}: give -1 (none of the messages has a time) or a time from 0 to 2^53 - 1 ms`,
    );
  }
}
