import { invalidArgument, LedgerlineError } from '@ledgerline/errors';

/** The stable reasons subscription calls fail with; programs branch on these. */
export const SubscriptionReason = {
  /** An Exclusive subscription already has its consumer. */
  CONSUMER_BUSY: 'CONSUMER_BUSY',
  /** Consumers of another subscription type are connected to the subscription. */
  SUBSCRIPTION_TYPE_MISMATCH: 'SUBSCRIPTION_TYPE_MISMATCH',
  TOO_MANY_CONSUMERS: 'TOO_MANY_CONSUMERS',
  INVALID_SUBSCRIPTION_TYPE: 'INVALID_SUBSCRIPTION_TYPE',
  INVALID_CONSUMER_OPTIONS: 'INVALID_CONSUMER_OPTIONS',
  INVALID_PERMITS: 'INVALID_PERMITS',
  INVALID_ACK: 'INVALID_ACK',
  /** Cumulative acks need one consumer in order: Exclusive or Failover only. */
  CUMULATIVE_ACK_NOT_ALLOWED: 'CUMULATIVE_ACK_NOT_ALLOWED',
  INVALID_CONFIG: 'INVALID_CONFIG',
  /** The owner has no dead-letter publisher (a read-only owner cannot publish). */
  DEAD_LETTER_UNSUPPORTED: 'DEAD_LETTER_UNSUPPORTED',
  /** The consumer left (or was removed) before the call. */
  CONSUMER_CLOSED: 'CONSUMER_CLOSED',
  /** The owner's source keeps waking its reader with nothing to read (a bug in the source, reported through onError). */
  SOURCE_WAKES_WITHOUT_ENTRIES: 'SOURCE_WAKES_WITHOUT_ENTRIES',
  /** Entries to redeliver were not returned by the source (a failed read); retried with backoff. */
  ENTRIES_NOT_READ: 'ENTRIES_NOT_READ',
  /** A consumer's sink threw on a call: the consumer is removed and what it held goes to the others (reported through onError). */
  CONSUMER_SINK_FAILED: 'CONSUMER_SINK_FAILED',
  /** Publishing to the dead-letter topic failed; retried after DEAD_LETTER_RETRY_DELAY_MS (reported through onError). */
  DEAD_LETTER_FAILED: 'DEAD_LETTER_FAILED',
  /** A seek target the source cannot resolve. */
  INVALID_SEEK_TARGET: 'INVALID_SEEK_TARGET',
  /** The subscription was closed by its owner (topic unloaded, unsubscribed). */
  SUBSCRIPTION_CLOSED: 'SUBSCRIPTION_CLOSED',
} as const;

export type SubscriptionReasonName = (typeof SubscriptionReason)[keyof typeof SubscriptionReason];

const R = SubscriptionReason;

export function consumerClosedError(name: string): LedgerlineError {
  return new LedgerlineError('FAILED_PRECONDITION', R.CONSUMER_CLOSED, `consumer ${name} is closed`);
}

export function subscriptionClosedError(name: string): LedgerlineError {
  return new LedgerlineError('FAILED_PRECONDITION', R.SUBSCRIPTION_CLOSED, `subscription ${name} is closed`);
}

export function badConsumerOption(message: string): LedgerlineError {
  return invalidArgument(R.INVALID_CONSUMER_OPTIONS, message);
}
