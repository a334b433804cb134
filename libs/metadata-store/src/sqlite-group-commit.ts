import type Database from 'better-sqlite3';

import { LedgerlineError } from '@ledgerline/errors';
import { sqliteGroupCommit, type SqliteLockQueue } from '@ledgerline/storage-kit';
import { MetadataStoreReason } from './metadata-errors.js';

/** Writes one SQLite transaction holds at most; more wait for the next one. */
export const MAX_WRITES_PER_TRANSACTION = 1000;
/** Writes that may wait for the next commits at once; more fail UNAVAILABLE / STORE_BUSY at once. */
export const MAX_QUEUED_WRITES = 100_000;

/**
 * The metadata file's group commit (storage-kit's sqliteGroupCommit): the
 * writes of one turn share one transaction, each in its own savepoint. A batch
 * that waited busyTimeoutMs for another process's lock fails with the busy
 * error (UNAVAILABLE / STORE_BUSY), unapplied.
 */
export function groupCommit(
  db: Database.Database,
  mapError: (error: unknown) => unknown,
  busyTimeoutMs: number,
): SqliteLockQueue {
  return sqliteGroupCommit(db, {
    busyTimeoutMs,
    maxWaiting: MAX_QUEUED_WRITES,
    maxPerTransaction: MAX_WRITES_PER_TRANSACTION,
    mapError,
    refuse: () =>
      new LedgerlineError(
        'UNAVAILABLE',
        MetadataStoreReason.STORE_BUSY,
        `${MAX_QUEUED_WRITES} writes already wait for the metadata file; try again shortly`,
      ),
  });
}
