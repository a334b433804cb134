import { LedgerlineError } from '@ledgerline/errors';

/** The stable reasons managed-ledger calls fail with; programs branch on these. */
export const ManagedLedgerReason = {
  /** The ledger store fenced our ledger: another owner recovered the topic. */
  ledgerFenced: 'LEDGER_FENCED',
  /** A compare-and-set on ManagedLedgerInfo lost: another owner wrote it. */
  managedLedgerFenced: 'MANAGED_LEDGER_FENCED',
  managedLedgerClosed: 'MANAGED_LEDGER_CLOSED',
  managedLedgerDeleting: 'MANAGED_LEDGER_DELETING',
  topicTerminated: 'TOPIC_TERMINATED',
  tooManyPendingAppends: 'TOO_MANY_PENDING_APPENDS',
  entryTooLarge: 'ENTRY_TOO_LARGE',
  invalidNumMessages: 'INVALID_NUM_MESSAGES',
  invalidPayload: 'INVALID_PAYLOAD',
  ledgerWriteFailed: 'LEDGER_WRITE_FAILED',
  /** The append was written but its outcome could not be learned before the owner stopped: it may be in the log. */
  appendOutcomeUnknown: 'APPEND_OUTCOME_UNKNOWN',
  infoCorrupt: 'MANAGED_LEDGER_INFO_CORRUPT',
  invalidConfig: 'INVALID_MANAGED_LEDGER_CONFIG',
  invalidReadLimits: 'INVALID_READ_LIMITS',
  positionOutOfRange: 'POSITION_OUT_OF_RANGE',
  tooManyReadWaiters: 'TOO_MANY_READ_WAITERS',
  readCancelled: 'READ_CANCELLED',
  offsetOutOfRange: 'OFFSET_OUT_OF_RANGE',
  entryMetadataMissing: 'ENTRY_METADATA_MISSING',
  cursorNotFound: 'CURSOR_NOT_FOUND',
  cursorClosed: 'CURSOR_CLOSED',
  cursorFenced: 'CURSOR_FENCED',
  invalidCursorName: 'INVALID_CURSOR_NAME',
  tooManyCursors: 'TOO_MANY_CURSORS',
  resetEpochMismatch: 'CURSOR_RESET_EPOCH_MISMATCH',
  invalidAckDelta: 'INVALID_ACK_DELTA',
  invalidSeekTarget: 'INVALID_SEEK_TARGET',
  invalidCursorStart: 'INVALID_CURSOR_START',
  invalidBatchAck: 'INVALID_BATCH_ACK',
  invalidProperty: 'INVALID_CURSOR_PROPERTY',
  badVersion: 'BAD_VERSION',
} as const;

const R = ManagedLedgerReason;

export function ledgerFencedError(name: string, cause?: unknown): LedgerlineError {
  return new LedgerlineError(
    'ABORTED',
    R.ledgerFenced,
    `managed ledger ${name} was fenced: another owner took the topic, so this one can no longer append`,
    { details: { managedLedger: name }, cause },
  );
}

export function managedLedgerFencedError(name: string, cause?: unknown): LedgerlineError {
  return new LedgerlineError(
    'ABORTED',
    R.managedLedgerFenced,
    `the metadata of managed ledger ${name} changed under this owner: another owner took the topic`,
    { details: { managedLedger: name }, cause },
  );
}

export function closedError(name: string): LedgerlineError {
  return new LedgerlineError('FAILED_PRECONDITION', R.managedLedgerClosed, `managed ledger ${name} is closed`, {
    details: { managedLedger: name },
  });
}

export function terminatedError(name: string): LedgerlineError {
  return new LedgerlineError(
    'FAILED_PRECONDITION',
    R.topicTerminated,
    `managed ledger ${name} is terminated: it accepts no more entries`,
    { details: { managedLedger: name } },
  );
}

export function deletingError(name: string): LedgerlineError {
  return new LedgerlineError(
    'FAILED_PRECONDITION',
    R.managedLedgerDeleting,
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
    R.appendOutcomeUnknown,
    `managed ledger ${name} stopped (${cause.reason}) before it learned whether this append was stored: it may be in the log`,
    { details: { managedLedger: name }, cause },
  );
}

export function corruptInfoError(what: string, cause: unknown): LedgerlineError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new LedgerlineError('DATA_LOSS', R.infoCorrupt, `stored ${what} does not decode: ${detail}`, { cause });
}

/** True for a lost compare-and-set: the metadata store's BAD_VERSION. */
export function isBadVersion(err: unknown): boolean {
  return LedgerlineError.is(err, R.badVersion);
}

/** True when the ledger store refused a write because the ledger was fenced. */
export function isLedgerFenced(err: unknown): boolean {
  return LedgerlineError.is(err, R.ledgerFenced);
}

/** Fencing of either kind: the topic has another owner now. */
export function isFencing(err: unknown): boolean {
  return LedgerlineError.is(err, R.ledgerFenced) || LedgerlineError.is(err, R.managedLedgerFenced);
}
