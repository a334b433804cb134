import type Database from 'better-sqlite3';
import { LedgerlineError, ErrorReason } from '@ledgerline/errors';

/**
 * How long SQLite itself waits for a lock in one attempt (its busy_timeout):
 * that wait blocks the event loop, so it stays short and the rest of the
 * wait happens between attempts, on timers.
 */
export const LOCK_ATTEMPT_MS = 2;
/** The pause between two attempts to take a lock another connection holds. */
const LOCK_RETRY_MS = 1;
/** Writes one store lets wait for the write lock at once; more fail UNAVAILABLE at once. */
export const MAX_WAITING_WRITES = 10_000;

interface WaitingWrite {
  body: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  deadline: number;
}

/**
 * The write transactions of one connection, in call order. Each runs as one
 * IMMEDIATE transaction, at once when the write lock is free. When another
 * connection (another process) holds the lock, the write waits for it on
 * timers rather than in SQLite's busy handler, so the event loop keeps
 * serving, and it keeps trying every millisecond or so, which gives it a fair
 * chance at the short gaps between a busy writer's transactions (SQLite's own
 * handler backs off to 100 ms and can starve). Past `busyTimeoutMs` the write
 * fails with the SQLite busy error, which the store reports as UNAVAILABLE.
 */
export class SqliteWriteQueue {
  private readonly waiting: WaitingWrite[] = [];
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly busyTimeoutMs: number,
  ) {}

  run<T>(body: () => T): Promise<T> {
    if (this.waiting.length >= MAX_WAITING_WRITES) {
      return Promise.reject(
        new LedgerlineError(
          'UNAVAILABLE',
          ErrorReason.STORE_UNAVAILABLE,
          `${MAX_WAITING_WRITES} writes already wait for the ledger file's write lock, which another process holds`,
        ),
      );
    }
    return new Promise<T>((resolve, reject) => {
      const deadline = Date.now() + this.busyTimeoutMs;
      this.waiting.push({ body, resolve: resolve as (value: unknown) => void, reject, deadline });
      if (this.waiting.length === 1) this.drain();
    });
  }

  /** Fails every waiting write (the store closed). */
  abort(error: unknown): void {
    clearTimeout(this.retryTimer);
    for (const write of this.waiting.splice(0)) write.reject(error);
  }

  private drain(): void {
    this.retryTimer = undefined;
    while (this.waiting.length > 0) {
      const head = this.waiting[0]!;
      let value: unknown;
      try {
        value = this.db.transaction(head.body).immediate();
      } catch (thrown) {
        if (isBusy(thrown) && Date.now() < head.deadline) {
          this.retryTimer = setTimeout(() => this.drain(), LOCK_RETRY_MS);
          return;
        }
        this.waiting.shift();
        head.reject(thrown);
        continue;
      }
      this.waiting.shift();
      head.resolve(value);
    }
  }
}

/**
 * Runs a read, retrying on timers while SQLite reports a lock (in WAL mode a
 * read waits only for another connection's recovery of the log), until
 * `busyTimeoutMs` has passed.
 */
export async function readWithLockWait<T>(read: () => T, busyTimeoutMs: number): Promise<T> {
  const deadline = Date.now() + busyTimeoutMs;
  for (;;) {
    try {
      return read();
    } catch (thrown) {
      if (!isBusy(thrown) || Date.now() >= deadline) throw thrown;
    }
    await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
  }
}

export function isBusy(thrown: unknown): boolean {
  const code = (thrown as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}
