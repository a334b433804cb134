import { DATA_PATH_LIMITS } from '@ledgerline/cursor-codec';
import { LedgerlineError } from '@ledgerline/errors';
import { SubscriptionReason } from './errors.js';

/** Unacknowledged messages one consumer may hold before delivery to it pauses (Pulsar's default). */
export const DEFAULT_MAX_UNACKED_MESSAGES_PER_CONSUMER = 50_000;
/** Unacknowledged messages a whole subscription may hold before delivery pauses (Pulsar's default). */
export const DEFAULT_MAX_UNACKED_MESSAGES_PER_SUBSCRIPTION = 200_000;
/** Entries one read from the source asks for at most (Pulsar's dispatcherMaxReadBatchSize). */
export const DEFAULT_MAX_READ_BATCH_ENTRIES = 100;
/**
 * Positions waiting for redelivery (or held back for Key_Shared ordering) at
 * most; past it no new entries are read until some are delivered. This is
 * how far a fast Key_Shared consumer can run ahead of a stuck key.
 */
export const DEFAULT_MAX_REPLAY_POSITIONS = 10_000;
/** Positions whose delivery count is remembered; the oldest is forgotten first (its count restarts at 0). */
export const DEFAULT_MAX_TRACKED_DELIVERY_COUNTS = 100_000;
/** Consumers one subscription may have at once. */
export const DEFAULT_MAX_CONSUMERS_PER_SUBSCRIPTION = 1_000;
/** Flow permits (messages) a consumer can hold; more are clamped to this. */
export const MAX_AVAILABLE_PERMITS = 1_000_000;
/** Positions one ack or nack may name: the data path's one cap (DATA_PATH_LIMITS.maxAckPositionsPerCall), kept under this name for its users. */
export const MAX_POSITIONS_PER_CALL = DATA_PATH_LIMITS.maxAckPositionsPerCall;
/** Consumer names are 1 to this many characters. */
export const MAX_CONSUMER_NAME_LENGTH = 256;
/** Ack timeouts are 0 (none) or at least this (Pulsar's client minimum), in ms. */
export const MIN_ACK_TIMEOUT_MS = 1_000;
/** Ack timeouts and nack delays are at most a day, in ms. */
export const MAX_REDELIVERY_DELAY_MS = 86_400_000;
/** A negatively acknowledged message is redelivered after this long unless the consumer says otherwise (Pulsar's default), in ms. */
export const DEFAULT_NACK_REDELIVERY_DELAY_MS = 60_000;
/** Dead-letter policies allow at most this many redeliveries. */
export const MAX_DEAD_LETTER_REDELIVERIES = 10_000;
/** A dead-letter publish that failed is tried again after this long, in ms. */
export const DEAD_LETTER_RETRY_DELAY_MS = 1_000;
/** A read from the source that failed with a retryable error is tried again after this long, doubling per failure, in ms. */
export const READ_RETRY_BASE_DELAY_MS = 100;
/** The longest wait between read retries, in ms. */
export const READ_RETRY_MAX_DELAY_MS = 5_000;
/**
 * Wake-ups from a source's waitForEntries followed by a read that found
 * nothing, in a row, before dispatch pauses READ_RETRY_BASE_DELAY_MS (a
 * source that wakes its reader for nothing would otherwise spin the loop).
 */
export const MAX_EMPTY_WAKEUPS = 10;
/** Key_Shared: points each consumer takes on the hash ring (Pulsar's subscriptionKeySharedConsistentHashingReplicaPoints). */
export const DEFAULT_KEY_SHARED_HASH_RING_POINTS = 100;
/** Message rates are counted over windows this long, in ms. */
export const RATE_WINDOW_MS = 10_000;

/** The bounds of one subscription, all in messages or entries as named. */
export interface SubscriptionLimits {
  maxUnackedMessagesPerConsumer: number;
  maxUnackedMessagesPerSubscription: number;
  maxReadBatchEntries: number;
  maxReplayPositions: number;
  maxTrackedDeliveryCounts: number;
  maxConsumers: number;
  keySharedHashRingPoints: number;
}

export const DEFAULT_SUBSCRIPTION_LIMITS: Readonly<SubscriptionLimits> = Object.freeze({
  maxUnackedMessagesPerConsumer: DEFAULT_MAX_UNACKED_MESSAGES_PER_CONSUMER,
  maxUnackedMessagesPerSubscription: DEFAULT_MAX_UNACKED_MESSAGES_PER_SUBSCRIPTION,
  maxReadBatchEntries: DEFAULT_MAX_READ_BATCH_ENTRIES,
  maxReplayPositions: DEFAULT_MAX_REPLAY_POSITIONS,
  maxTrackedDeliveryCounts: DEFAULT_MAX_TRACKED_DELIVERY_COUNTS,
  maxConsumers: DEFAULT_MAX_CONSUMERS_PER_SUBSCRIPTION,
  keySharedHashRingPoints: DEFAULT_KEY_SHARED_HASH_RING_POINTS,
});

/** Upper bounds of the settings themselves, so a typo cannot ask for unbounded memory. */
const CEILINGS: Readonly<SubscriptionLimits> = {
  maxUnackedMessagesPerConsumer: 10_000_000,
  maxUnackedMessagesPerSubscription: 100_000_000,
  maxReadBatchEntries: 10_000,
  maxReplayPositions: 1_000_000,
  maxTrackedDeliveryCounts: 10_000_000,
  maxConsumers: 100_000,
  keySharedHashRingPoints: 1_000,
};

/** Defaults overridden by `input`; every value a positive integer within its ceiling, else INVALID_CONFIG. */
export function resolveSubscriptionLimits(input: Partial<SubscriptionLimits> = {}): SubscriptionLimits {
  const limits = { ...DEFAULT_SUBSCRIPTION_LIMITS, ...input };
  for (const name of Object.keys(CEILINGS) as (keyof SubscriptionLimits)[]) {
    const value = limits[name];
    if (!Number.isSafeInteger(value) || value < 1 || value > CEILINGS[name]) {
      throw new LedgerlineError(
        'INVALID_ARGUMENT',
        SubscriptionReason.INVALID_CONFIG,
        `${name} must be an integer from 1 to ${CEILINGS[name]}, got ${String(value)}`,
      );
    }
  }
  return limits;
}
