import { LedgerlineError } from '@ledgerline/errors';
import { ManagedLedgerReason } from '@ledgerline/managed-ledger';
import { LedgerStoreReason } from '@ledgerline/ledger-store';
import { OwnerReason, topicUnloaded } from '@ledgerline/ownership';
import { WriterReason } from './reasons.js';

export function notServing(): LedgerlineError {
  return new LedgerlineError(
    'UNAVAILABLE',
    OwnerReason.OWNER_NOT_SERVING,
    'this writer owner is starting or draining: retry shortly, after a lookup',
  );
}

/** Failures that mean another owner has the topic now: this instance must let go of it. */
const OWNERSHIP_LOST = new Set<string>([
  LedgerStoreReason.LEDGER_FENCED,
  ManagedLedgerReason.MANAGED_LEDGER_FENCED,
  ManagedLedgerReason.CURSOR_FENCED,
]);

export function isOwnershipLost(error: LedgerlineError): boolean {
  return OWNERSHIP_LOST.has(error.reason);
}

/** Failures that mean the managed ledger was closed under the call (unload, drain). */
export function isClosed(error: LedgerlineError): boolean {
  return (
    error.reason === ManagedLedgerReason.MANAGED_LEDGER_CLOSED || error.reason === ManagedLedgerReason.CURSOR_CLOSED
  );
}

/**
 * Runs a call on `topic` that met its managed ledger closing under it (an
 * unload or a move under way) as UNAVAILABLE / TOPIC_UNLOADED, so the client
 * looks the topic up again and retries, instead of FAILED_PRECONDITION, which
 * it takes for final.
 */
export async function unlessClosedUnder<T>(topic: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof LedgerlineError && isClosed(error))
      throw topicUnloaded(topic, `${error.message} under this call`);
    throw error;
  }
}

export function subscriptionNotFound(topic: string, subscription: string): LedgerlineError {
  return new LedgerlineError(
    'NOT_FOUND',
    OwnerReason.SUBSCRIPTION_NOT_FOUND,
    `${topic} has no subscription ${subscription}`,
    {
      details: { topic, subscription },
    },
  );
}

/** UNAVAILABLE, so a producer reconnects and resends everything it holds from the oldest, in order. */
export function sequenceGap(producer: string, sequenceId: bigint, resendFrom: bigint): LedgerlineError {
  return new LedgerlineError(
    'UNAVAILABLE',
    WriterReason.SEQUENCE_GAP,
    `producer ${producer}'s entry from sequence id ${resendFrom} was not stored, so ${sequenceId} cannot be stored ` +
      `before it: resend from ${resendFrom} in order, or reconnect`,
    { details: { producerName: producer, sequenceId: String(sequenceId), resendFromSequenceId: String(resendFrom) } },
  );
}
