// Cursor state with millions of acknowledgement holes: the range set, its three
// encodings, and crash-safe chunked snapshots in a cursor ledger.
export { AckSet } from './ack-set.js';
export type { AckRange, AckRangeVisitor } from './ack-set.js';
export {
  createCursorState,
  remainingBatchIndexes,
  batchAckFromRemaining,
  MAX_BATCH_SIZE,
  MAX_PROPERTIES,
} from './cursor-state.js';
export type { CursorState, BatchAck } from './cursor-state.js';
export { positionKey, parsePositionKey, comparePositions } from './position.js';
export type { Position, EntryRange } from './position.js';
export { checkPosition, checkEntryPosition, checkEntryRange } from './checked-position.js';
export type { CheckedPosition, EntryPosition, CheckedEntryRange } from './checked-position.js';
export { checkEntryAcks } from './checked-acks.js';
export type { CheckedEntryAcks } from './checked-acks.js';
export { DATA_PATH_LIMITS, checkWithinLimit } from './data-path-limits.js';
export type { DataPathLimit } from './data-path-limits.js';
export {
  encodeCursorState,
  CURSOR_STATE_FORMATS,
  DEFAULT_MAX_RANGES_TO_PERSIST,
  DEFAULT_MAX_BATCH_ACKS_TO_PERSIST,
  DEFAULT_MAX_ENCODED_BYTES,
} from './encode-cursor-state.js';
export { EncodedCursorState } from './encode-cursor-state.js';
export type { CursorStateFormat, EncodeCursorStateOptions, CursorStateEncodingReport } from './encode-cursor-state.js';
export { decodeCursorState, detectCursorStateFormat, DEFAULT_MAX_DECODED_BODY_BYTES } from './decode-cursor-state.js';
export type { DecodeCursorStateOptions } from './decode-cursor-state.js';
export type { CompactCompression } from './compact-writer.js';
export { toSnapshotEntries, DEFAULT_MAX_ENTRY_SIZE, DEFAULT_MAX_SNAPSHOT_PARTS } from './snapshot-entries.js';
export type { SnapshotEntriesOptions, SnapshotFooter } from './snapshot-entries.js';
export { recoverSnapshot, DEFAULT_MAX_SCAN_ENTRIES } from './recover-snapshot.js';
export type {
  ReadEntry,
  RecoverSnapshotOptions,
  RecoveredSnapshot,
  SkippedEntry,
  CorruptSnapshot,
} from './recover-snapshot.js';
export { SkipReason } from './recover-snapshot.js';
export { CursorCodecReason } from './errors.js';

// For other packages (the managed cursor, the writer owner): format constants and limits.
export { COMPACT_MAGIC, COMPACT_VERSION } from './compact-writer.js';
export { LONG_ARRAY_MAX_ENTRY_ID } from './long-array.js';
export { ENTRY_MAGIC, ENTRY_VERSION, parseSnapshotEntry } from './snapshot-entries.js';
export type { ParsedEntry } from './snapshot-entries.js';
