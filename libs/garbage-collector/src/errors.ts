import { LedgerlineError } from '@ledgerline/errors';

/** Reasons the collector reports (status, ListPendingDeletions, logs). */
export const CollectorReason = {
  ownerTagMismatch: 'OWNER_TAG_MISMATCH',
  fullScanRateLimited: 'FULL_SCAN_RATE_LIMITED',
  collectorStopped: 'COLLECTOR_STOPPED',
  badPageToken: 'BAD_PAGE_TOKEN',
  badPageSize: 'BAD_PAGE_SIZE',
} as const;

export function isBadVersionError(error: unknown): boolean {
  return LedgerlineError.is(error, 'BAD_VERSION');
}

export function isNotFoundError(error: unknown): boolean {
  return LedgerlineError.from(error).code === 'NOT_FOUND';
}
