import { LedgerInfoReason } from '@ledgerline/ledger-info';

// This module loads no ledger store (errors.ts, which names the ledger store's
// reasons, would bring both backends along), so the files that only need a
// reason stay light.

/**
 * The stable reasons managed-ledger calls fail with; programs branch on these.
 * Reasons the ledger store or the metadata store own (LEDGER_FENCED,
 * ENTRY_TOO_LARGE, BAD_VERSION) are theirs and are not repeated here; those of
 * the stored ManagedLedgerInfo format (@ledgerline/ledger-info) are included.
 */
export const ManagedLedgerReason = {
  ...LedgerInfoReason,
  /** A compare-and-set on ManagedLedgerInfo lost: another owner wrote it. */
  MANAGED_LEDGER_FENCED: 'MANAGED_LEDGER_FENCED',
  MANAGED_LEDGER_CLOSED: 'MANAGED_LEDGER_CLOSED',
  MANAGED_LEDGER_DELETING: 'MANAGED_LEDGER_DELETING',
  /** A read-only view's topic is gone: its writer's managed ledger was deleted. */
  MANAGED_LEDGER_DELETED: 'MANAGED_LEDGER_DELETED',
  /** A read-only view could not read ManagedLedgerInfo as new as the writer's (waitSync). */
  MANAGED_LEDGER_INFO_STALE: 'MANAGED_LEDGER_INFO_STALE',
  TOPIC_TERMINATED: 'TOPIC_TERMINATED',
  TOO_MANY_PENDING_APPENDS: 'TOO_MANY_PENDING_APPENDS',
  INVALID_NUM_MESSAGES: 'INVALID_NUM_MESSAGES',
  INVALID_EVENT_TIME: 'INVALID_EVENT_TIME',
  INVALID_PAYLOAD: 'INVALID_PAYLOAD',
  LEDGER_WRITE_FAILED: 'LEDGER_WRITE_FAILED',
  /** The append was written but its outcome could not be learned (the owner stopped, or the store stayed away): it may be in the log. */
  APPEND_OUTCOME_UNKNOWN: 'APPEND_OUTCOME_UNKNOWN',
  INVALID_READ_LIMITS: 'INVALID_READ_LIMITS',
  POSITION_OUT_OF_RANGE: 'POSITION_OUT_OF_RANGE',
  TOO_MANY_READ_WAITERS: 'TOO_MANY_READ_WAITERS',
  OFFSET_OUT_OF_RANGE: 'OFFSET_OUT_OF_RANGE',
  ENTRY_METADATA_MISSING: 'ENTRY_METADATA_MISSING',
  CURSOR_CLOSED: 'CURSOR_CLOSED',
  CURSOR_FENCED: 'CURSOR_FENCED',
  INVALID_CURSOR_NAME: 'INVALID_CURSOR_NAME',
  TOO_MANY_CURSORS: 'TOO_MANY_CURSORS',
  CURSOR_RESET_EPOCH_MISMATCH: 'CURSOR_RESET_EPOCH_MISMATCH',
  INVALID_ACK_DELTA: 'INVALID_ACK_DELTA',
  INVALID_SEEK_TARGET: 'INVALID_SEEK_TARGET',
  INVALID_CURSOR_START: 'INVALID_CURSOR_START',
  INVALID_BATCH_ACK: 'INVALID_BATCH_ACK',
  INVALID_CURSOR_PROPERTY: 'INVALID_CURSOR_PROPERTY',
  ENTRY_OFFSET_TABLE_CORRUPT: 'ENTRY_OFFSET_TABLE_CORRUPT',
  LEDGER_ENTRY_IDS_DIVERGED: 'LEDGER_ENTRY_IDS_DIVERGED',
} as const;
