import { LedgerlineError } from '@ledgerline/errors';
import { encodeMessageEntry, messageCount, type EntryInput } from '@ledgerline/message-format';
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

/** Encodes and checks a publish request; INVALID_ARGUMENT or RESOURCE_EXHAUSTED before any work is done. */
export function prepareEntry(
  message: PublishMessage,
  publishTimeMs: number,
  maxMessageSizeBytes: number,
): { bytes: Uint8Array; numMessages: number } {
  if (message.producerName.length > MAX_DEDUP_PRODUCER_NAME_LENGTH) {
    throw new LedgerlineError(
      'INVALID_ARGUMENT',
      OwnerReason.INVALID_REQUEST,
      `a producer name is at most ${MAX_DEDUP_PRODUCER_NAME_LENGTH} characters`,
    );
  }
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
  return { bytes, numMessages: messageCount(message) };
}
