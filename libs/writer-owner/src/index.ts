// The writer owner: what apps/writer-owner and standalone host.
export { WriterOwner } from './writer-owner.js';
export type { WriterOwnerOptions, ConsumeBackend, LiveSubscriptionStats } from './writer-owner.js';
export { writerClusterConfigSchema, writerSettings, resolveWriterSettings } from './config.js';
export type { WriterClusterConfig, WriterSettings } from './config.js';
export { startClusterWriterOwner, startWriterOwnerService } from './server.js';
export type { RunningWriterOwner, WriterOwnerServiceOptions } from './server.js';
export type { MetadataClients } from './metadata-clients.js';
export { lateMetadataClients, renewLeaseOrLoss } from './metadata-clients.js';
export type { OwnerIdentity } from './owner-session.js';
export { WriterReason } from './reasons.js';
export { consumeBackend } from './consume-backend.js';

// For other packages and tests: limits, reserved names, the pieces the services are built from.
export { DEDUP_CURSOR_NAME, MAX_DEDUP_PRODUCER_NAME_LENGTH } from './deduplication.js';
export { RESERVED_SUBSCRIPTION_PREFIX } from './topics-service.js';
export { writerMetrics } from './metrics.js';
export type { WriterMetrics } from './metrics.js';

// For the read-only owner (PIP-63), which serves consumers the same way: the owner session, the Consume
// stream over the subscriptions lib, the entry shape, the proto mappings and the write refusal reason.
export { OwnerSession } from './owner-session.js';
export type { OwnerSessionOptions } from './owner-session.js';
export { consumeStream, MAX_ENTRIES_PER_CONSUME_RESPONSE, MAX_CONSUME_RESPONSE_BYTES } from './consume-stream.js';
export type { ConsumeSession, OpenConsumeSession, ConsumeResponse } from './consume-stream.js';
export { consumerOptions, subscriptionTypeOf, entryResponse } from './consume-backend.js';
export { writerEntry } from './cursor-source.js';
export type { WriterEntry } from './cursor-source.js';
export { entryMessage, positionFromRequest, positionMessage, safeNumber, seekTarget } from './proto-mapping.js';
export { checkSubscriptionName } from './topics-service.js';
export { cursorData } from './cursors-service.js';
export { connectOwnerBackends, drainingShutdown, ownerIdentity } from './owner-lifecycle.js';
export type {
  DrainingShutdownOptions,
  OwnerBackends,
  OwnerBackendSettings,
  OwnerIdentitySettings,
} from './owner-lifecycle.js';
