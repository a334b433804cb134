// The garbage collector (PIP-129 phase 2): what apps/garbage-collector and standalone host.
export { GarbageCollector, LAST_FULL_SCAN_PATH } from './collector.js';
export type { GarbageCollectorOptions, PassOptions, PassReport, CollectorStatus } from './collector.js';
export { startCollectorService, startClusterCollector, clusterCollectorConfigSchema } from './server.js';
export type { RunningCollectorService, CollectorServiceOptions, ClusterCollectorConfig } from './server.js';
export { collectorSettings, collectorConfigSchema, resolveCollectorConfig } from './config.js';
export type { CollectorConfig, CollectorConfigInput } from './config.js';
export { GrpcCollectorMetadata } from './collector-metadata.js';
export type { CollectorMetadata, StoredNode, FinishOutcome } from './collector-metadata.js';
export { InProcessCollectorMetadata } from './store-collector-metadata.js';
export type { VersionedNodes } from './store-collector-metadata.js';
export { CollectorReason } from './errors.js';
export type { PendingDeletion } from './pending-table.js';
export type { CollectorLogger } from './collector-context.js';

// For other packages and tools: the service implementation, membership layout and limits.
export { garbageCollectorServiceImpl, DEFAULT_PENDING_PAGE, MAX_PENDING_PAGE } from './service.js';
export { MEMBERS_DIR, rendezvousOwner } from './membership.js';
export { retryDelayMs } from './pending-table.js';
