export type {
  MetadataStore,
  MetadataSession,
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
export { validatePath } from './validate.js';
export { SqliteMetadataStore } from './sqlite-store.js';
export type { SqliteMetadataStoreOptions } from './sqlite-store.js';
