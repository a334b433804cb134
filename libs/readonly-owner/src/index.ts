// The read-only owner (PIP-63): what apps/readonly-owner and standalone host.
export { ReadOnlyOwner } from './readonly-owner.js';
export type { ReadOnlyOwnerOptions } from './readonly-owner.js';
export { readOnlyClusterConfigSchema, readOnlySettings, resolveReadOnlySettings } from './config.js';
export type { ReadOnlyClusterConfig, ReadOnlySettings } from './config.js';
export { startClusterReadOnlyOwner, startReadOnlyOwnerService } from './server.js';
export type { RunningReadOnlyOwner, ReadOnlyOwnerServiceOptions } from './server.js';
export { ReadOnlyOwnerReason } from './reasons.js';

// For other packages and tests: the pieces the service is built from.
export { RemoteCursorSource } from './remote-cursor-source.js';
export { WriterClients } from './writer-clients.js';
export { readOnlyMetrics } from './metrics.js';
export type { ReadOnlyMetrics } from './metrics.js';
