// The stored ManagedLedgerInfo format and its pure helpers: the managed ledger
// writes it, the metadata service and the garbage collector read and rewrite
// it without loading the managed ledger (nor any ledger-store backend).
export {
  infoFromProto,
  infoToProto,
  cloneInfo,
  markDeleting,
  withDeletable,
  emptyManagedLedgerInfo,
  storedLastOffset,
  storedLowWatermark,
  INDEX_PROPERTY,
  LOW_WATERMARK_PROPERTY,
  ENTRY_COUNTS_PROPERTY,
} from './managed-ledger-info.js';
export type {
  ManagedLedgerInfoModel,
  LedgerSummary,
  DeletableLedgerRecord,
  ManagedLedgerStateName,
  LedgerComponentName,
} from './managed-ledger-info.js';
export { int64ToNumber, positionFromProto, positionToProto } from './stored-numbers.js';
// The pending-deletions index (written before every marker) and the change only the collector makes.
export {
  PENDING_DELETIONS_DIR,
  PENDING_DELETION_SHARDS,
  pendingDeletionShard,
  pendingDeletionShardDir,
  pendingDeletionEntryPath,
  encodePendingDeletionEntry,
  decodePendingDeletionEntry,
} from './pending-deletions-index.js';
export type { PendingDeletionEntry } from './pending-deletions-index.js';
export { isCollectorChange, ownerEpoch, OWNER_EPOCH_PROPERTY } from './collector-changes.js';
export { LedgerInfoReason, corruptInfoError } from './reasons.js';
