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
