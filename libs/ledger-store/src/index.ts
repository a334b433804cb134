export type {
  LedgerStore,
  LedgerWriter,
  LedgerEntry,
  LedgerInfo,
  LedgerState,
  CreateLedgerOptions,
  LedgerStoreLimits,
  LedgerStoreOptions,
} from './store.js';
export {
  OwnerTag,
  DEFAULT_MAX_ENTRY_BYTES,
  DEFAULT_MAX_READ_ENTRIES,
  DEFAULT_MAX_APPEND_ENTRIES,
  DEFAULT_MAX_APPEND_BYTES,
  DEFAULT_LIST_PAGE,
  MAX_LIST_PAGE,
  MAX_BATCH_LEDGERS,
  MAX_OWNER_TAGS_BYTES,
} from './store.js';
export { createLedgerStore, LedgerStoreConfigSchema } from './create-ledger-store.js';
export type { LedgerStoreConfig } from './create-ledger-store.js';
export { SqliteLedgerStore } from './sqlite-store.js';
export type { SqliteLedgerStoreOptions } from './sqlite-store.js';
export { RedisLedgerStore } from './redis-store.js';
export { MAX_WAIT_REPLICAS, DEFAULT_WAIT_TIMEOUT_MS } from './redis-options.js';
export type { RedisLedgerStoreOptions } from './redis-options.js';
export { LedgerStoreReason } from './errors.js';
// For other packages: the shared validation, so wrappers reject bad input exactly as the stores do.
export { validateLedgerId, validateEntryId, resolveLimits } from './validate.js';
