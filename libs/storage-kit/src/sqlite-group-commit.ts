import type Database from 'better-sqlite3';
import type { LedgerlineError } from '@ledgerline/errors';
import { SqliteLockQueue, type WriteOutcome } from './sqlite-lock-queue.js';

export interface GroupCommitOptions {
  /** How long a batch may wait for another connection's lock; past it every write of the batch fails. */
  busyTimeoutMs: number;
  /** Writes that may wait for the next commits at once; one more is refused at once with `refuse()`. */
  maxWaiting: number;
  /** Writes one transaction holds at most; more wait for the next one. */
  maxPerTransaction: number;
  /** The error for a write submitted while maxWaiting writes wait already. */
  refuse: () => LedgerlineError;
  /** What a caller hears for a failed write; default: the error as thrown. */
  mapError?: (thrown: unknown) => unknown;
  /**
   * Which writes share a transaction: those of one turn of the event loop
   * ('next-turn', the default), or those of one run of a callback and its
   * microtasks ('end-of-tick': no wait for another turn, for writers that
   * already gather their writes in one run).
   */
  start?: 'next-turn' | 'end-of-tick';
}

/**
 * Group commit: the writes submitted during one turn of the event loop are
 * applied in submission order inside one IMMEDIATE transaction, each in its
 * own savepoint (a write that throws, like a failed compare-and-set or an
 * append to a fenced ledger, rolls back alone). They share one commit, and
 * with synchronous=FULL one fsync, which is where a SQLite write spends its
 * time. Each caller hears its own outcome only after the commit. While another
 * process holds the write lock the batch waits on timers (the event loop keeps
 * serving) and tries again about every millisecond, until its oldest write has
 * waited busyTimeoutMs: then the whole batch fails with the busy error, unapplied.
 */
export function sqliteGroupCommit(db: Database.Database, options: GroupCommitOptions): SqliteLockQueue {
  return new SqliteLockQueue(groupTransactionOn(db), {
    busyTimeoutMs: options.busyTimeoutMs,
    maxWaiting: options.maxWaiting,
    maxPerTransaction: options.maxPerTransaction,
    start: options.start ?? 'next-turn',
    refuse: options.refuse,
    ...(options.mapError === undefined ? {} : { mapError: options.mapError }),
  });
}

/**
 * One group commit's transaction, as source: a function of a connection
 * returning `transact(bodies)`, which runs the bodies in order in one
 * IMMEDIATE transaction, each in its own savepoint, and says how each went
 * ({ ok, value } or { ok: false, error }); it throws when the transaction
 * could not begin (another process holds the lock: the caller waits and tries
 * again). Kept as source so that a thread which imports nothing (the ledger
 * store's writer thread, run with `eval`) runs this very code.
 */
export const GROUP_TRANSACTION_SOURCE = `function groupTransaction(db) {
  const inSavepoint = db.transaction((apply) => apply());
  return function transact(bodies) {
    const outcomes = [];
    let begun = false;
    try {
      db.transaction(() => {
        begun = true;
        for (const apply of bodies) {
          try {
            outcomes.push({ ok: true, value: inSavepoint(apply) });
          } catch (error) {
            // SQLite rolled the whole transaction back (disk full, I/O error): the writes before are undone, and
            // the ones after would each run in a transaction of their own, applied though the batch fails.
            if (!db.inTransaction) throw error;
            outcomes.push({ ok: false, error });
          }
        }
      }).immediate();
    } catch (error) {
      // The transaction never began (another process holds the lock): the caller waits and tries again.
      if (!begun) throw error;
      // The commit itself failed (locked, disk full, closed): nothing in the batch happened.
      return bodies.map(() => ({ ok: false, error }));
    }
    return outcomes;
  };
}`;

/** GROUP_TRANSACTION_SOURCE's `transact` over a connection of this thread. */
export function groupTransactionOn(db: Database.Database): (bodies: (() => unknown)[]) => WriteOutcome[] {
  const factory = new Function(`return (${GROUP_TRANSACTION_SOURCE});`)() as (
    connection: Database.Database,
  ) => (bodies: (() => unknown)[]) => WriteOutcome[];
  return factory(db);
}
