import type Database from 'better-sqlite3';

import { LedgerlineError } from '@ledgerline/errors';
import { SqliteLockQueue, type WriteOutcome } from '@ledgerline/storage-kit';
import { MetadataStoreReason } from './metadata-errors.js';

/** Writes one SQLite transaction holds at most; more wait for the next one. */
export const MAX_WRITES_PER_TRANSACTION = 1000;
/** Writes that may wait for the next commits at once; more fail UNAVAILABLE / STORE_BUSY at once. */
export const MAX_QUEUED_WRITES = 100_000;

/**
 * Group commit: the writes submitted during one turn of the event loop are
 * applied in submission order inside one IMMEDIATE transaction, each in its
 * own savepoint (a write that throws, like a failed compare-and-set, rolls back
 * alone). They share one commit, and with synchronous=FULL one fsync, which is
 * where a SQLite write spends its time. Each caller hears its own outcome only
 * after the commit. While another process holds the write lock the batch
 * waits on timers (the event loop keeps serving) and tries again about every
 * millisecond, until its oldest write has waited busyTimeoutMs: then the
 * whole batch fails with the busy error (UNAVAILABLE / STORE_BUSY), unapplied.
 */
export function groupCommit(
  db: Database.Database,
  mapError: (error: unknown) => unknown,
  busyTimeoutMs: number,
): SqliteLockQueue {
  const inSavepoint = db.transaction((apply: () => unknown) => apply());
  const transact = (bodies: (() => unknown)[]): WriteOutcome[] => {
    const outcomes: WriteOutcome[] = [];
    try {
      db.transaction(() => {
        for (const apply of bodies) {
          try {
            outcomes.push({ ok: true, value: inSavepoint(apply) });
          } catch (error) {
            outcomes.push({ ok: false, error });
          }
        }
      }).immediate();
    } catch (error) {
      // The transaction never began (another process holds the lock): the queue waits and tries again.
      if (outcomes.length === 0) throw error;
      // The commit itself failed (locked, disk full, closed): nothing in the batch happened.
      return bodies.map(() => ({ ok: false, error }));
    }
    return outcomes;
  };
  return new SqliteLockQueue(transact, {
    busyTimeoutMs,
    maxWaiting: MAX_QUEUED_WRITES,
    maxPerTransaction: MAX_WRITES_PER_TRANSACTION,
    start: 'next-turn',
    mapError,
    refuse: () =>
      new LedgerlineError(
        'UNAVAILABLE',
        MetadataStoreReason.STORE_BUSY,
        `${MAX_QUEUED_WRITES} writes already wait for the metadata file; try again shortly`,
      ),
  });
}
