import { LedgerlineError, ErrorReason } from '@ledgerline/errors';
import { MAX_CAS_ATTEMPTS, MAX_CAS_BACKOFF_MS } from './limits.js';
import { MetadataServiceReason } from './errors.js';
import { sleep } from './sleep.js';

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
  for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
    try {
      return await step();
    } catch (error) {
      if (!isBadVersion(error)) throw error;
      await sleep(Math.random() * Math.min(MAX_CAS_BACKOFF_MS, 2 ** Math.min(attempt, 5)));
    }
  }
  throw new LedgerlineError(
    'ABORTED',
    MetadataServiceReason.TOO_MUCH_CONTENTION,
    `${what} kept conflicting with concurrent changes after ${MAX_CAS_ATTEMPTS} attempts; retry later`,
  );
}
