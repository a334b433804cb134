import { LedgerlineError, ErrorReason } from '@ledgerline/errors';
import { LedgerStoreReason } from '@ledgerline/ledger-store';

export { ManagedLedgerReason } from './reasons.js';
export { corruptInfoError } from '@ledgerline/ledger-info';
import { ManagedLedgerReason } from './reasons.js';

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
 * An append whose write may have landed, failed before the ledger could be
 * read back (the owner stopped: fenced, deleted; or the store stayed away
 * through every retry): the entry may or may not be in the log, so a
 * definite reason would be a lie.
 */
export function appendOutcomeUnknownError(name: string, cause: LedgerlineError): LedgerlineError {
  return new LedgerlineError(
    'UNAVAILABLE',
    ManagedLedgerReason.APPEND_OUTCOME_UNKNOWN,
    `managed ledger ${name} failed (${cause.reason}) before it learned whether this append was stored: it may be in the log`,
    { details: { managedLedger: name }, cause },
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
