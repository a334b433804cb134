import { LedgerlineError, ErrorReason } from '@ledgerline/errors';
import { backOff } from 'exponential-backoff';
import { CAS_BACKOFF_START_MS, MAX_CAS_ATTEMPTS, MAX_CAS_BACKOFF_MS } from '../limits.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

/** True for the store's compare-and-set conflict (a version changed, or a create-only write found a node). */
export function isBadVersion(error: unknown): boolean {
  return LedgerlineError.is(error, ErrorReason.BAD_VERSION);
}

/**
 * Runs a read-then-compare-and-set step until it stops conflicting. The step
 * re-reads on every attempt. Back-off is jittered and capped; after
 * MAX_CAS_ATTEMPTS the caller gets ABORTED / TOO_MUCH_CONTENTION (retryable
 * by the client) instead of an endless loop.
 */
export async function retryOnConflict<T>(what: string, step: () => Promise<T>): Promise<T> {
  try {
    return await backOff(step, {
      numOfAttempts: MAX_CAS_ATTEMPTS,
      startingDelay: CAS_BACKOFF_START_MS,
      timeMultiple: 2,
      maxDelay: MAX_CAS_BACKOFF_MS,
      jitter: 'full',
      retry: (error: unknown) => isBadVersion(error),
    });
  } catch (error) {
    if (!isBadVersion(error)) throw error;
    throw new LedgerlineError(
      'ABORTED',
      MetadataServiceReason.TOO_MUCH_CONTENTION,
      `${what} kept conflicting with concurrent changes after ${MAX_CAS_ATTEMPTS} attempts; retry later`,
    );
  }
}
