// The stored ManagedLedgerInfo format and its pure helpers, as the subpath
// `@ledgerline/managed-ledger/info`: the metadata service and the garbage
// collector read and rewrite ManagedLedgerInfo without loading the managed
// ledger itself, so they load no ledger-store backend (Redis or SQLite).
export {
  infoFromProto,
  infoToProto,
  markDeleting,
  emptyManagedLedgerInfo,
  INDEX_PROPERTY,
  ENTRY_COUNTS_PROPERTY,
} from '../managed-ledger-info.js';
export type {
  ManagedLedgerInfoModel,
  LedgerSummary,
  DeletableLedgerRecord,
  ManagedLedgerStateName,
  LedgerComponentName,
} from '../managed-ledger-info.js';
// The pending-deletions index (written before every marker) and the change only the collector makes.
export {
  PENDING_DELETIONS_DIR,
  PENDING_DELETION_SHARDS,
  pendingDeletionShard,
  pendingDeletionShardDir,
  pendingDeletionEntryPath,
  encodePendingDeletionEntry,
  decodePendingDeletionEntry,
} from '../pending-deletions-index.js';
export type { PendingDeletionEntry } from '../pending-deletions-index.js';
export { isCollectorChange, OWNER_EPOCH_PROPERTY } from '../collector-changes.js';
