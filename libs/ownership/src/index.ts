// What every owner (writer and read-only) stands on to own topics and serve consumers.
export { OwnerSession } from './owner-session.js';
export type { OwnerSessionOptions } from './owner-session.js';
export { LoadMeter, IDLE_LOAD, BUSIEST_TOPICS_REPORTED } from './owner-load.js';
export type { OwnerLoad, LoadTotals, LoadSource, LoadMeterOptions, TopicLoad } from './owner-load.js';
export { trafficTotals, type TrafficCounters } from './traffic-totals.js';
export { loadMessage } from './load-mapping.js';
export { exportLoadMetrics } from './load-metrics.js';
export { ownerIdentity } from './owner-identity.js';
export type { OwnerIdentity, OwnerIdentitySettings } from './owner-identity.js';
export { acquireLease, confirmLeases, takeUpLease } from './lease.js';
export type { LeaseContext } from './lease.js';
export { lateMetadataClients } from './metadata-clients.js';
export type { MetadataClients } from './metadata-clients.js';
export { connectOwnerBackends } from './owner-backends.js';
export type { OwnerBackends, OwnerBackendSettings } from './owner-backends.js';
export { drainingShutdown } from './draining-shutdown.js';
export type { DrainingShutdownOptions } from './draining-shutdown.js';
export { OwnerReason } from './reasons.js';
export { notOwner, topicUnloaded } from './owner-errors.js';
export { refuseTrimmedOffset } from './trimmed-offset.js';
export type { OffsetLanding } from './trimmed-offset.js';
export { unloadOnRequest } from './unload-request.js';
export { PeerOwners, MAX_PEER_CHANNELS } from './peer-owners.js';
export { handOverLease } from './lease-hand-over.js';
export { markOwnerDraining } from './owner-draining.js';
export type { HandOverContext, HandedOver } from './lease-hand-over.js';
export type { UnloadableTopics } from './unload-request.js';

// The Consume stream both owners serve, and the wire mapping of what it carries.
export { consumeStream, MAX_ENTRIES_PER_CONSUME_RESPONSE, MAX_CONSUME_RESPONSE_BYTES } from './consume-stream.js';
export type { WireConsumeSession, OpenWireConsumeSession, ConsumeOutput } from './consume-stream.js';
export { encodeEntries, entryDelivery, WireEntry, WriterEntryDelivery } from './consume-response.js';
export { consumerOptions, protoSubscriptionType, subscriptionStart, subscriptionTypeOf } from './subscribe-request.js';
export type { SubscriptionStart } from './subscribe-request.js';
export { checkSubscriptionName, RESERVED_SUBSCRIPTION_PREFIX } from './subscription-name.js';
export { writerEntry } from './writer-entry.js';
export type { EntryWire, WriterEntry } from './writer-entry.js';
export {
  entryMessage,
  positionFromRequest,
  positionMessage,
  safeNumber,
  seekTarget,
  ledgerStatsMessages,
  earliestOffset,
  MAX_LEDGER_STATS,
} from './proto-mapping.js';
export { entryWireBytes, MAX_FETCH_RESPONSE_BYTES, messageWireBytes, withinWireBytes } from './wire-size.js';
