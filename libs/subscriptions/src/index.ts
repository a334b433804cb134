// Subscriptions, dispatch, flow control and redelivery: the consume path both
// kinds of owner share, over a SubscriptionSource (the cursor) and one
// ConsumerSink per consumer (the transport).
export { Subscription } from './subscription.js';
export type { SubscriptionOptions } from './subscription.js';
export { Consumer } from './consumer.js';
export { SubscriptionType } from './types.js';
export type {
  AckRequest,
  ConsumerOptions,
  ConsumerSink,
  ConsumerStats,
  DeadLetterPolicy,
  DeadLetterPublisher,
  Delivery,
  DispatchEntry,
  DispatchState,
  SeekTarget,
  SubscriptionSource,
  SubscriptionStats,
} from './types.js';
export { SubscriptionReason } from './errors.js';
export type { SubscriptionReasonName } from './errors.js';
export {
  DEFAULT_SUBSCRIPTION_LIMITS,
  resolveSubscriptionLimits,
  DEFAULT_MAX_UNACKED_MESSAGES_PER_CONSUMER,
  DEFAULT_MAX_UNACKED_MESSAGES_PER_SUBSCRIPTION,
  DEFAULT_MAX_READ_BATCH_ENTRIES,
  DEFAULT_MAX_REPLAY_POSITIONS,
  DEFAULT_MAX_TRACKED_DELIVERY_COUNTS,
  DEFAULT_MAX_CONSUMERS_PER_SUBSCRIPTION,
  DEFAULT_KEY_SHARED_HASH_RING_POINTS,
  DEFAULT_NACK_REDELIVERY_DELAY_MS,
  MAX_AVAILABLE_PERMITS,
  MAX_POSITIONS_PER_CALL,
  MAX_CONSUMER_NAME_LENGTH,
  MIN_ACK_TIMEOUT_MS,
  MAX_REDELIVERY_DELAY_MS,
  MAX_DEAD_LETTER_REDELIVERIES,
  DEAD_LETTER_RETRY_DELAY_MS,
  READ_RETRY_BASE_DELAY_MS,
  READ_RETRY_MAX_DELAY_MS,
  MAX_EMPTY_WAKEUPS,
  RATE_WINDOW_MS,
} from './limits.js';
export type { SubscriptionLimits } from './limits.js';
export { systemScheduler } from './scheduler.js';
export type { Scheduler } from './scheduler.js';

// For other packages (the Consume stream checking an Ack where it enters): the one ack check and its result.
export { checkAckRequest, checkPositions } from './validate.js';
export type { CheckedAck, CheckedBatchAck, UncheckedAck } from './validate.js';

// For other packages (owners hashing keys the same way, e.g. in stats or tests): Pulsar's sticky key hash.
export { stickyKeyHash, StickyKeyConsumerSelector } from './sticky-key-selector.js';
