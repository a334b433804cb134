import { MAX_BATCH_SIZE } from '@ledgerline/cursor-codec';
import { invalidArgument, LedgerlineError } from '@ledgerline/errors';
import { LedgerStoreReason } from '@ledgerline/ledger-store';
import { ENTRY_HEADROOM_BYTES } from '@ledgerline/offset-index';
import type { AppendQueue } from './append-queue.js';
import type { AppendOptions } from '../entry.js';
import type { ManagedLedgerConfig } from '../config.js';
import { ManagedLedgerReason } from '../errors.js';

/** Framing adds at most this much to a payload: 6 header bytes and three tagged uint64 varints. */
export const MAX_FRAMING_BYTES = ENTRY_HEADROOM_BYTES;

export function checkAppendArguments(
  payload: unknown,
  numMessages: unknown,
  maxEntrySizeBytes: number,
  options?: AppendOptions,
): void {
  const maxEventTimeMs = options?.maxEventTimeMs;
  if (maxEventTimeMs !== undefined && (!Number.isSafeInteger(maxEventTimeMs) || maxEventTimeMs < 0)) {
    throw invalidArgument(
      ManagedLedgerReason.INVALID_EVENT_TIME,
      `maxEventTimeMs must be an integer from 0 to 2^53 - 1, got ${String(maxEventTimeMs)}`,
    );
  }
  if (!(payload instanceof Uint8Array)) {
    throw invalidArgument(ManagedLedgerReason.INVALID_PAYLOAD, 'the payload must be a Uint8Array');
  }
  if (
    typeof numMessages !== 'number' ||
    !Number.isSafeInteger(numMessages) ||
    numMessages < 1 ||
    numMessages > MAX_BATCH_SIZE
  ) {
    throw invalidArgument(
      ManagedLedgerReason.INVALID_NUM_MESSAGES,
      `numMessages must be an integer from 1 to ${MAX_BATCH_SIZE}`,
    );
  }
  if (payload.byteLength + MAX_FRAMING_BYTES > maxEntrySizeBytes) {
    throw new LedgerlineError(
      'INVALID_ARGUMENT',
      LedgerStoreReason.ENTRY_TOO_LARGE,
      `the payload has ${payload.byteLength} bytes; with framing an entry may have at most ${maxEntrySizeBytes} (maxEntrySizeBytes)`,
    );
  }
}

/** Why an append of `payloadBytes` does not fit in the queue's bounds (maxPendingAppends, maxPendingAppendBytes). */
export function pendingLimitError(
  name: string,
  queue: AppendQueue,
  payloadBytes: number,
  config: ManagedLedgerConfig,
): LedgerlineError | undefined {
  if (queue.length < config.maxPendingAppends && queue.bytes + payloadBytes <= config.maxPendingAppendBytes) {
    return undefined;
  }
  return new LedgerlineError(
    'RESOURCE_EXHAUSTED',
    ManagedLedgerReason.TOO_MANY_PENDING_APPENDS,
    `managed ledger ${name} has ${queue.length} appends (${queue.bytes} bytes) pending; ` +
      `the limits are maxPendingAppends ${config.maxPendingAppends} and maxPendingAppendBytes ${config.maxPendingAppendBytes}`,
  );
}
