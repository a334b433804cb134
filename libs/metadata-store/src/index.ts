/**
 * @ledgerline/metadata-store: the versioned metadata tree every service
 * relies on, with an embedded SQLite backend (standalone) and a Redis / Redis
 * Cluster backend. Every change is announced on the bus as a MetadataChange
 * hint (at most once; watchers re-read to converge).
 */
export type {
  MetadataStore,
  MetadataSession,
  Versioned,
  VersionedValue,
  ExpectedVersion,
  PutOptions,
  DeleteOptions,
  ChildrenOptions,
  ChildrenPage,
  SessionOptions,
  MetadataChange,
  MetadataStoreOptions,
} from './store.js';
export {
  MAX_PATH_BYTES,
  DEFAULT_MAX_VALUE_BYTES,
  MAX_VALUE_BYTES,
  DEFAULT_CHILDREN_PAGE,
  MAX_CHILDREN_PAGE,
  MAX_SEQUENCE_NAME_BYTES,
  MIN_SESSION_TTL_MS,
  MAX_SESSION_TTL_MS,
  MAX_OPEN_SESSIONS,
  DEFAULT_SESSION_SWEEP_INTERVAL_MS,
} from './store.js';
export { createMetadataStore } from './create-metadata-store.js';
export type {
  MetadataStoreConfig,
  SqliteMetadataStoreConfig,
  RedisMetadataStoreConfig,
} from './create-metadata-store.js';
export { validatePath } from './validate.js';
export { SqliteMetadataStore } from './sqlite-store.js';
export type { SqliteMetadataStoreOptions } from './sqlite-store.js';
export { RedisMetadataStore } from './redis-store.js';
export type { RedisMetadataStoreOptions } from './redis-store.js';
export { DEFAULT_REDIS_KEY_PREFIX } from './redis-keys.js';

// For other packages: path helpers and the fail-fast Redis client setup the stores share.
export { nodePath, joinPath } from './validate.js';
export type { PathParts } from './validate.js';
export { mapRedisError } from './redis-errors.js';
export { connectMetadataRedis } from './redis-store.js';
export type { RedisClient } from './redis-scripts.js';
export { MetadataStoreReason } from './metadata-errors.js';
