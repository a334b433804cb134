import { LedgerlineError, ErrorReason } from '@ledgerline/errors';
import { LedgerStoreReason } from '@ledgerline/ledger-store';

/**
 * The stable reasons managed-ledger calls fail with; programs branch on these.
 * Reasons the ledger store or the metadata store own (LEDGER_FENCED,
 * ENTRY_TOO_LARGE, BAD_VERSION) are theirs and are not repeated here.
 */
export const ManagedLedgerReason = {
  /** A compare-and-set on ManagedLedgerInfo lost: another owner wrote it. */
  MANAGED_LEDGER_FENCED: 'MANAGED_LEDGER_FENCED',
  MANAGED_LEDGER_CLOSED: 'MANAGED_LEDGER_CLOSED',
  MANAGED_LEDGER_DELETING: 'MANAGED_LEDGER_DELETING',
  TOPIC_TERMINATED: 'TOPIC_TERMINATED',
  TOO_MANY_PENDING_APPENDS: 'TOO_MANY_PENDING_APPENDS',
  INVALID_NUM_MESSAGES: 'INVALID_NUM_MESSAGES',
  INVALID_PAYLOAD: 'INVALID_PAYLOAD',
  LEDGER_WRITE_FAILED: 'LEDGER_WRITE_FAILED',
  /** The append was written but its outcome could not be learned before the owner stopped: it may be in the log. */
  APPEND_OUTCOME_UNKNOWN: 'APPEND_OUTCOME_UNKNOWN',
  MANAGED_LEDGER_INFO_CORRUPT: 'MANAGED_LEDGER_INFO_CORRUPT',
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
  METADATA_VALUE_OUT_OF_RANGE: 'METADATA_VALUE_OUT_OF_RANGE',
  /** A pending-deletion index shard number out of 0 to PENDING_DELETION_SHARDS - 1. */
  INVALID_SHARD: 'INVALID_SHARD',
  /** A pending-deletion index entry this code never wrote. */
  CORRUPT_PENDING_DELETION_ENTRY: 'CORRUPT_PENDING_DELETION_ENTRY',
} as const;

export function ledgerFencedError(name: string, cause?: unknown): LedgerlineError {
  return new LedgerlineError(
    'ABORTED',
    LedgerStoreReason.LEDGER_FENCED,
    `managed ledger ${name} was fenced: another owner took the topic, so this one can no longer append`,
    { details: { managedLedger: name }, cause },
  );
}

export function managedLedgerFencedError(name: string, cause?: unknown): LedgerlineError {
  return new LedgerlineError(
    'ABORTED',
    ManagedLedgerReason.MANAGED_LEDGER_FENCED,
    `the metadata of managed ledger ${name} changed under this owner: another owner took the topic`,
    { details: { managedLedger: name }, cause },
  );
}

export function closedError(name: string): LedgerlineError {
  return new LedgerlineError(
    'FAILED_PRECONDITION',
    ManagedLedgerReason.MANAGED_LEDGER_CLOSED,
    `managed ledger ${name} is closed`,
    {
      details: { managedLedger: name },
    },
  );
}

export function terminatedError(name: string): LedgerlineError {
  return new LedgerlineError(
    'FAILED_PRECONDITION',
    ManagedLedgerReason.TOPIC_TERMINATED,
    `managed ledger ${name} is terminated: it accepts no more entries`,
    { details: { managedLedger: name } },
  );
}

export function deletingError(name: string): LedgerlineError {
  return new LedgerlineError(
    'FAILED_PRECONDITION',
    ManagedLedgerReason.MANAGED_LEDGER_DELETING,
    `managed ledger ${name} is being deleted`,
    { details: { managedLedger: name } },
  );
}

/**
 * An append whose write may have landed, failed because the owner stopped
 * (fenced, deleted) before it could read the ledger back: the entry may or
 * may not be in the log, so a definite reason would be a lie.
 */
export function appendOutcomeUnknownError(name: string, cause: LedgerlineError): LedgerlineError {
  return new LedgerlineError(
    'UNAVAILABLE',
    ManagedLedgerReason.APPEND_OUTCOME_UNKNOWN,
    `managed ledger ${name} stopped (${cause.reason}) before it learned whether this append was stored: it may be in the log`,
    { details: { managedLedger: name }, cause },
  );
}

export function corruptInfoError(what: string, cause: unknown): LedgerlineError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new LedgerlineError(
    'DATA_LOSS',
    ManagedLedgerReason.MANAGED_LEDGER_INFO_CORRUPT,
    `stored ${what} does not decode: ${detail}`,
    { cause },
  );
}

/** True for a lost compare-and-set: the metadata store's BAD_VERSION. */
export function isBadVersion(err: unknown): boolean {
  return LedgerlineError.is(err, ErrorReason.BAD_VERSION);
}

/** True when the ledger store refused a write because the ledger was fenced. */
export function isLedgerFenced(err: unknown): boolean {
  return LedgerlineError.is(err, LedgerStoreReason.LEDGER_FENCED);
}

/** Fencing of either kind: the topic has another owner now. */
export function isFencing(err: unknown): boolean {
  return (
    LedgerlineError.is(err, LedgerStoreReason.LEDGER_FENCED) ||
    LedgerlineError.is(err, ManagedLedgerReason.MANAGED_LEDGER_FENCED)
  );
}
