// Entry framing, offsets and lookups: what a managed ledger or a protocol handler uses.
export { encodeEntry, decodeEntry, allocateWithEntryHeadroom, ENTRY_HEADROOM_BYTES } from './entry-framing.js';
export type { EntryMetadata, DecodedEntryMetadata, DecodedEntry } from './entry-framing.js';
export { OffsetAssigner } from './offset-assigner.js';
export type {
  OffsetAssignerOptions,
  AssignedOffsets,
  RecoveryLedgerInfo,
  AppendFailureVerdict,
} from './offset-assigner.js';
export { LedgerOffsetIndex } from './ledger-offset-index.js';
export type { LedgerRange } from './ledger-offset-index.js';
export type { IndexSpacing, LedgerIndexOptions } from './index-options.js';
export { TopicOffsetIndex } from './topic-offset-index.js';
export type { TopicLedger } from './topic-ledger.js';
export { resolveOffsetInEntries, resolveTimeInEntries } from './resolve-in-entries.js';
export { findPositionByOffset, findPositionByTime, findPositionByEventTime } from './find-position.js';
export type { MessageTimes } from './resolve-in-entries.js';
export type { FindPositionOptions } from './find-position.js';
export type { MessagePosition, EntryReadRange, Location, StoredEntry, EntryReader } from './positions.js';

// For other packages, tests and benchmarks: limits, LedgerInfo conversion, the index format, the Pulsar-style baseline.
export {
  BROKER_ENTRY_METADATA_MAGIC,
  ENTRY_HEADER_BYTES,
  MAX_BROKER_ENTRY_METADATA_BYTES,
  DEFAULT_ENTRIES_PER_POINT,
  DEFAULT_BYTES_PER_POINT,
  MAX_ENTRIES_PER_POINT,
  MAX_BYTES_PER_POINT,
  MAX_INDEX_POINTS,
  MAX_SERIALIZED_INDEX_BYTES,
  DEFAULT_MAX_PENDING_ENTRIES,
  DEFAULT_MAX_APPEND_ATTEMPTS,
  DEFAULT_MAX_READ_ENTRIES,
} from './limits.js';
export { MAX_LEDGERS_PER_TOPIC, topicLedgerFromIndex } from './topic-ledger.js';
export { ledgerInfoOffsetFields, topicLedgerFromLedgerInfo } from './ledger-info-fields.js';
export type { LedgerInfoOffsetFields } from './ledger-info-fields.js';
export { LEDGER_INDEX_MAGIC, LEDGER_INDEX_VERSION } from './ledger-index-codec.js';
export { binarySearchByOffset, binarySearchByTime } from './binary-search-baseline.js';
export type { LedgerEntryCount, BaselineResult } from './binary-search-baseline.js';
export { OffsetIndexReason } from './errors.js';
