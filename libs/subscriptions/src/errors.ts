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
