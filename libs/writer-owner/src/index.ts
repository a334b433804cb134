// The writer owner: what apps/writer-owner and standalone host.
export { WriterOwner } from './writer-owner.js';
export type { WriterOwnerOptions, ConsumeBackend } from './writer-owner.js';
export type { LiveSubscriptionStats } from './owner-view.js';
export { writerClusterConfigSchema, writerSettings, resolveWriterSettings } from './config.js';
export type { WriterClusterConfig, WriterSettings } from './config.js';
export { startClusterWriterOwner, startWriterOwnerService } from './server.js';
export type { RunningWriterOwner, WriterOwnerServiceOptions } from './server.js';
export { WriterReason } from './reasons.js';
export { consumeBackend } from './consume-backend.js';

// For other packages and tests: limits, reserved names, the pieces the services are built from. What
// both kinds of owner share (sessions, leases, the Consume stream, OwnerReason) is @ledgerline/ownership's.
export { DEDUP_CURSOR_NAME, MAX_DEDUP_PRODUCER_NAME_LENGTH } from './deduplication.js';
export { DeliveryStage, writerMetrics } from './metrics.js';
export type { WriterMetrics } from './metrics.js';
export { cursorData } from './cursor-data.js';
