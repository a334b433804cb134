import type Database from 'better-sqlite3';

/** Writes one SQLite transaction holds at most; more wait for the next one. */
export const MAX_WRITES_PER_TRANSACTION = 1000;

interface PendingWrite {
  apply: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: the writes submitted during one turn of the event loop are
 * applied in submission order inside one IMMEDIATE transaction, each in its
 * own savepoint (a write that throws, like a failed compare-and-set, rolls back
 * alone). They share one commit, and with synchronous=FULL one fsync, which is
 * where a SQLite write spends its time. Each caller hears its own outcome only
 * after the commit.
 */
export class GroupCommit {
  private queue: PendingWrite[] = [];
  private scheduled = false;
  private readonly inSavepoint: (apply: () => unknown) => unknown;

  constructor(
    private readonly db: Database.Database,
    private readonly mapError: (error: unknown) => unknown,
  ) {
    this.inSavepoint = db.transaction((apply: () => unknown) => apply());
  }

  submit<T>(apply: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ apply, resolve: resolve as (value: unknown) => void, reject });
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
