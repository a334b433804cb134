import { ErrorReason, LedgerlineError } from '@ledgerline/errors';

/** Reasons the collector reports (status, ListPendingDeletions, logs). */
export const CollectorReason = {
  OWNER_TAG_MISMATCH: 'OWNER_TAG_MISMATCH',
  FULL_SCAN_RATE_LIMITED: 'FULL_SCAN_RATE_LIMITED',
  COLLECTOR_STOPPED: 'COLLECTOR_STOPPED',
  BAD_PAGE_TOKEN: 'BAD_PAGE_TOKEN',
  BAD_PAGE_SIZE: 'BAD_PAGE_SIZE',
  /** FinishTopicDeletion answered an outcome this collector does not know: the metadata service is newer; upgrade the collector. */
  UNKNOWN_FINISH_OUTCOME: 'UNKNOWN_FINISH_OUTCOME',
  /** A ManagedLedgerInfo node does not decode: the collector leaves the topic alone. */
  CORRUPT_METADATA: 'CORRUPT_METADATA',
} as const;

export function isBadVersionError(error: unknown): boolean {
  return LedgerlineError.is(error, ErrorReason.BAD_VERSION);
}

export function isNotFoundError(error: unknown): boolean {
  return LedgerlineError.from(error).code === 'NOT_FOUND';
}
