import type Database from 'better-sqlite3';

import { LedgerlineError } from '@ledgerline/errors';
import { isBusy } from './sqlite-errors.js';
import { MetadataStoreReason } from './metadata-errors.js';

/** Writes one SQLite transaction holds at most; more wait for the next one. */
export const MAX_WRITES_PER_TRANSACTION = 1000;
/** Writes that may wait for the next commits at once; more fail UNAVAILABLE / STORE_BUSY at once. */
export const MAX_QUEUED_WRITES = 100_000;
/** How long SQLite itself polls for a lock in one attempt (its busy_timeout): that wait blocks the event loop. */
export const LOCK_ATTEMPT_MS = 2;
/** The pause between two attempts to take a lock another process holds. */
export const LOCK_RETRY_MS = 1;

interface PendingWrite {
  apply: () => unknown;
  /** Past this time the write stops waiting for another process's lock. */
  deadline: number;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

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
export class GroupCommit {
  private queue: PendingWrite[] = [];
  private scheduled = false;
  private readonly inSavepoint: (apply: () => unknown) => unknown;

  constructor(
    private readonly db: Database.Database,
    private readonly mapError: (error: unknown) => unknown,
    private readonly busyTimeoutMs = 5000,
  ) {
    this.inSavepoint = db.transaction((apply: () => unknown) => apply());
  }

  submit<T>(apply: () => T): Promise<T> {
    if (this.queue.length >= MAX_QUEUED_WRITES) {
      return Promise.reject(
        new LedgerlineError(
          'UNAVAILABLE',
          MetadataStoreReason.STORE_BUSY,
          `${MAX_QUEUED_WRITES} writes already wait for the metadata file; try again shortly`,
        ),
      );
    }
    return new Promise<T>((resolve, reject) => {
      const deadline = Date.now() + this.busyTimeoutMs;
      this.queue.push({ apply, deadline, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits everything queued now; used before the database closes. */
  flushAll(): void {
    while (this.queue.length > 0) this.flush();
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue.splice(0, MAX_WRITES_PER_TRANSACTION);
    if (batch.length === 0) return;
    if (this.queue.length > 0) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    const outcomes: { ok: boolean; value: unknown }[] = [];
    try {
      this.db
        .transaction(() => {
          for (const write of batch) {
            try {
              outcomes.push({ ok: true, value: this.inSavepoint(write.apply) });
            } catch (error) {
              outcomes.push({ ok: false, value: error });
            }
          }
        })
        .immediate();
    } catch (error) {
      // The transaction never began: another process holds the lock. Wait for it, in order, on a timer.
      if (outcomes.length === 0 && isBusy(error) && Date.now() < batch[0]!.deadline) {
        this.queue.unshift(...batch);
        if (!this.scheduled) {
          this.scheduled = true;
          setTimeout(() => this.flush(), LOCK_RETRY_MS);
        }
        return;
      }
      // The commit itself failed (locked, disk full, closed): nothing in the batch happened.
      for (const write of batch) write.reject(this.mapError(error));
      return;
    }
    batch.forEach((write, index) => {
      const outcome = outcomes[index] as { ok: boolean; value: unknown };
      if (outcome.ok) write.resolve(outcome.value);
      else write.reject(this.mapError(outcome.value));
    });
  }
}
