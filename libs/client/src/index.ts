export { createClient, LedgerlineClient } from './client.js';
export type { ClientOptions } from './client.js';
export { Producer } from './producer.js';
export type { ProducerOptions, BatchingOptions, SendOptions } from './producer.js';
export { Consumer } from './consumer.js';
export type { SeekTarget } from './consumer.js';
export { SUBSCRIPTION_TYPES } from './subscribe-options.js';
export type {
  SubscribeOptions,
  SubscriptionTypeName,
  InitialPositionOption,
  DeadLetterOptions,
} from './subscribe-options.js';
export { Reader, TRIMMED_OFFSET_POLICIES } from './reader.js';
export type { ReaderOptions, ReaderStart, TrimmedOffsetPolicy } from './reader.js';
export type { Message, MessageId, SendReceipt } from './message.js';
export { messageIdToString } from './message.js';
export type { RoutingMode } from './message-router.js';
export { ROUTING_MODES, keyHashPartition } from './message-router.js';
export type { TlsOptions } from './service-connections.js';
export { ClientReason } from './client-reason.js';
export type { ClientReasonName } from './client-reason.js';
export { LedgerlineError } from '@ledgerline/errors';
export {
  DEFAULT_OPERATION_TIMEOUT_MS,
  MAX_OPERATION_TIMEOUT_MS,
  DEFAULT_RECONNECT_INITIAL_DELAY_MS,
  DEFAULT_RECONNECT_MAX_DELAY_MS,
  MAX_RECONNECT_DELAY_MS,
  DEFAULT_MAX_RECONNECT_ATTEMPTS,
  MAX_RECONNECT_ATTEMPTS,
  MAX_ENTRY_SIZE_BYTES,
  DEFAULT_BATCH_MAX_MESSAGES,
  MAX_BATCH_MESSAGES,
  DEFAULT_BATCH_MAX_BYTES,
  DEFAULT_BATCH_MAX_DELAY_MS,
  MAX_BATCH_DELAY_MS,
  DEFAULT_MAX_PENDING_MESSAGES,
  MAX_PENDING_MESSAGES,
  MAX_NAME_LENGTH,
  DEFAULT_RECEIVER_QUEUE_SIZE,
  MAX_RECEIVER_QUEUE_SIZE,
  MIN_ACK_TIMEOUT_MS,
  MAX_ACK_TIMEOUT_MS,
  MAX_REDELIVERY_DELAY_MS,
  DEFAULT_NACK_REDELIVERY_DELAY_MS,
  MAX_DEAD_LETTER_REDELIVERIES,
} from './options.js';
export { READER_MAX_WAIT_MS, READER_MAX_ENTRIES_PER_FETCH } from './reader.js';
export { MAX_CACHED_LOOKUPS } from './topic-lookup.js';
export { MAX_REMEMBERED_ACKS, MAX_UNCONFIRMED_ACKS, ACK_GROUP_TIME_MS, MAX_ACK_GROUP_SIZE } from './partition-acks.js';
export { MAX_ENTRIES_PER_RESPONSE } from './partition-consumer.js';
export { MAX_COALESCED_ENTRIES, MAX_COALESCED_BYTES } from './partition-producer.js';

// For other packages: the channel credentials of a `tls` option, for tools that open their own channels (the CLI's admin commands).
export { channelCredentials } from './service-connections.js';
