// The managed ledger and its cursors: what the owner services use.
export { ManagedLedger } from './managed-ledger.js';
export { ManagedLedgerFactory } from './managed-ledger-factory.js';
export type { FactoryOpenOptions } from './managed-ledger-factory.js';
export type { HandOverState } from './hand-over-state.js';
export type { ManagedLedgerStatus, ReadOptions } from './managed-ledger.js';
export type { ManagedLedgerOpenOptions } from './managed-ledger-open.js';
export type { ManagedLedgerEntry, AppendResult, AppendOptions, AppendListener } from './entry.js';
export { formatPosition } from './position.js';
export { resolveManagedLedgerConfig, DEFAULT_MANAGED_LEDGER_CONFIG } from './config.js';
export type { ManagedLedgerConfig, ManagedCursorConfig, ManagedLedgerConfigInput } from './config.js';
export type { AppendTrace, ManagedLedgerDependencies, ManagedLedgerLogger } from './context.js';
export type { WaitOptions } from './ledgers/read-waiters.js';
export type { LedgerView } from './ledgers/ledger-views.js';
export { ManagedLedgerReason } from './errors.js';
export type { ManagedLedgerMetadata, CursorNamePage } from './metadata/metadata-access.js';
export { MAX_CURSOR_NAME_LENGTH } from './metadata/metadata-access.js';
export { MetadataStoreManagedLedgerMetadata } from './metadata/metadata-store-managed-ledger-metadata.js';
export { GrpcManagedLedgerMetadata } from './metadata/grpc-managed-ledger-metadata.js';
export { NodeManagedLedgerMetadata } from './metadata/node-managed-ledger-metadata.js';
export type { MetadataNodes } from './metadata/node-managed-ledger-metadata.js';
export { ManagedCursor } from './cursors/managed-cursor.js';
export { ReadOnlyManagedLedger, DEFAULT_READ_ONLY_LEDGER_SETTINGS } from './read-only/read-only-managed-ledger.js';
export { ReadOnlyCursorState, DEFAULT_MAX_DELTA_RANGES } from './read-only/read-only-cursor-state.js';
export type {
  ReadOnlyManagedLedgerOptions,
  ReadOnlyLedgerSettings,
  ReadOnlyLedgerStats,
} from './read-only/read-only-managed-ledger.js';
export type { SeekTarget, ExportedCursorState, CursorStatus, PropertyChanges } from './cursors/managed-cursor.js';
export { buildAckMap, rangesOf } from './cursors/ack-map.js';
export type {
  AckMapResult,
  AckedRangesPage,
  CursorSummary,
  MapCell,
  MapLedger,
  MapPosition,
  MapRange,
  RangeSource,
} from './cursors/ack-map.js';
export type { CursorStart, OpenCursorOptions } from './cursors/cursor-registry.js';
export type { AckDelta, BatchAckRecord, ExportedAcks } from './cursors/ack-delta.js';
export type { SnapshotWrite } from './cursors/cursor-persistence.js';

// For other packages (read-only owners, tools): limits, metrics and cursor node names.
export { ownerTags } from './ledgers/ledger-factory.js';
export { managedLedgerMetrics } from './metrics.js';
export type { ManagedLedgerMetrics } from './metrics.js';
export { cursorPath, cursorNameFromNode } from './metadata/cursor-name.js';
