import type { LedgerlineError } from '@ledgerline/errors';

/**
 * How long SQLite itself waits for a lock in one attempt (its busy_timeout):
 * that wait blocks the event loop, so it stays short and the rest of the wait
 * happens between attempts, on timers.
 */
export const LOCK_ATTEMPT_MS = 2;
/**
 * The pause between two attempts to take a lock another connection holds.
 * Trying about every millisecond gives a waiting write a fair chance at the
 * short gaps between a busy writer's transactions (SQLite's own handler backs
 * off to 100 ms and can starve).
 */
export const LOCK_RETRY_MS = 1;

/** True for a lock another connection holds, under any extended code (SQLITE_BUSY_RECOVERY ...). */
export function isSqliteBusy(thrown: unknown): boolean {
  const code = (thrown as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/**
 * Runs a read, retrying on timers while SQLite reports a lock (in WAL mode a
 * read waits only for another connection's recovery of the log), until
 * `busyTimeoutMs` has passed; then the busy error is thrown.
 */
export async function readWithLockWait<T>(read: () => T, busyTimeoutMs: number): Promise<T> {
  const deadline = Date.now() + busyTimeoutMs;
  for (;;) {
    try {
      return read();
    } catch (thrown) {
      if (!isSqliteBusy(thrown) || Date.now() >= deadline) throw thrown;
    }
    await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
  }
}

/** What one write came to inside a transaction. */
export type WriteOutcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export interface SqliteLockQueueOptions {
  /** How long a write may wait for another connection's lock; past it the write fails with the busy error. */
  busyTimeoutMs: number;
  /** Writes that may wait at once; one more is refused at once with `refuse()`. */
  maxWaiting: number;
  /** Writes one transaction takes: 1 runs each alone, more is group commit. */
  maxPerTransaction: number;
  /**
   * 'now': a write submitted to an idle queue runs before submit returns.
   * 'next-turn': the writes submitted during one turn of the event loop share
   * one transaction (one commit, one fsync).
   * 'end-of-tick': the writes submitted in one run of a callback and the
   * microtasks it queued share one transaction, which runs right after that
   * run (process.nextTick), without waiting for another turn.
   */
  start: 'now' | 'next-turn' | 'end-of-tick';
  /** The error for a write submitted while maxWaiting writes wait already. */
  refuse: () => LedgerlineError;
  /** What a caller hears for a failed write; default: the error as thrown. */
  mapError?: (thrown: unknown) => unknown;
}

interface WaitingWrite {
  body: () => unknown;
  /** Past this time the write stops waiting for another connection's lock. */
  deadline: number;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * The write transactions of one connection, in submission order. `transact`
 * runs a batch of writes in one IMMEDIATE transaction and says how each went;
 * it throws when the transaction could not begin or commit. When the failure
 * is a lock another connection (another process) holds, the batch waits for
 * it on timers rather than in SQLite's busy handler, so the event loop keeps
 * serving, and tries again every LOCK_RETRY_MS until its oldest write has
 * waited busyTimeoutMs; then every write of the batch fails.
 */
export class SqliteLockQueue {
  private readonly waiting: WaitingWrite[] = [];
  private draining = false;
  /** What will drain the queue next, if anything is scheduled. */
  private next: ScheduledDrain | undefined;
  private readonly mapError: (thrown: unknown) => unknown;

  constructor(
    private readonly transact: (bodies: (() => unknown)[]) => WriteOutcome[],
    private readonly options: SqliteLockQueueOptions,
  ) {
    this.mapError = options.mapError ?? ((thrown) => thrown);
  }

  get size(): number {
    return this.waiting.length;
  }

  submit<T>(body: () => T): Promise<T> {
    if (this.waiting.length >= this.options.maxWaiting) return Promise.reject(this.options.refuse());
    return new Promise<T>((resolve, reject) => {
      const deadline = Date.now() + this.options.busyTimeoutMs;
      this.waiting.push({ body, deadline, resolve: resolve as (value: unknown) => void, reject });
      if (this.next !== undefined || this.draining) return;
      if (this.options.start === 'now') this.drain(false);
      else this.schedule(this.options.start === 'end-of-tick' ? 'tick' : 'immediate');
    });
  }

  /**
   * Runs now the writes that only wait for their start (the end of the run
   * or the next turn), so that a read made after them sees them, as it would
   * had each run when submitted. Writes held back by another connection's
   * lock stay queued: a read does not wait for them.
   */
  flush(): void {
    if (this.draining || this.waiting.length === 0 || this.next?.kind === 'retry') return;
    this.cancelScheduled();
    this.drain(true);
  }

  /** Runs everything waiting now, spinning on a held lock until each batch's deadline; used before a close. */
  drainNow(): void {
    this.cancelScheduled();
    while (this.waiting.length > 0) this.attempt();
  }

  /** Fails every waiting write (the store closed). */
  abort(error: unknown): void {
    this.cancelScheduled();
    for (const write of this.waiting.splice(0)) write.reject(error);
  }

  /** Transactions over the queue until it is empty, a lock holds it back, or (unless `all`) group commit yields. */
  private drain(all: boolean): void {
    this.next = undefined;
    this.draining = true;
    try {
      while (this.waiting.length > 0) {
        if (this.attempt() === 'busy') return this.schedule('retry');
        // Group commit yields between transactions so writes from the next turn can join the next batch.
        if (!all && this.options.start !== 'now' && this.waiting.length > 0) return this.schedule('immediate');
      }
    } finally {
      this.draining = false;
    }
  }

  /** One transaction over the head of the queue: 'busy' when it should be tried again later. */
  private attempt(): 'done' | 'busy' {
    const batch = this.waiting.slice(0, this.options.maxPerTransaction);
    let outcomes: WriteOutcome[];
    try {
      outcomes = this.transact(batch.map((write) => write.body));
    } catch (thrown) {
      if (isSqliteBusy(thrown) && Date.now() < batch[0]!.deadline) return 'busy';
      this.waiting.splice(0, batch.length);
      for (const write of batch) write.reject(this.mapError(thrown));
      return 'done';
    }
    this.waiting.splice(0, batch.length);
    batch.forEach((write, index) => {
      const outcome = outcomes[index]!;
      if (outcome.ok) write.resolve(outcome.value);
      else write.reject(this.mapError(outcome.error));
    });
    return 'done';
  }

  private schedule(kind: ScheduledDrain['kind']): void {
    switch (kind) {
      case 'tick': {
        // A nextTick cannot be cancelled: a cancelled one finds another drain (or none) in its place and does nothing.
        const next: ScheduledDrain = { kind };
        this.next = next;
        process.nextTick(() => {
          if (this.next === next) this.drain(false);
        });
        return;
      }
      case 'immediate':
        this.next = { kind, handle: setImmediate(() => this.drain(false)) };
        return;
      case 'retry':
        this.next = { kind, handle: setTimeout(() => this.drain(false), LOCK_RETRY_MS) };
        return;
    }
  }

  private cancelScheduled(): void {
    const next = this.next;
    this.next = undefined;
    // Each handle is cleared by its own function: Node's clearImmediate takes any object for an immediate and
    // counts it off the process's immediates, after which no setImmediate callback of the process runs.
    if (next?.kind === 'immediate') clearImmediate(next.handle);
    else if (next?.kind === 'retry') clearTimeout(next.handle);
  }
}

/** How the queue drains next: at the end of the run (nextTick), on the next turn, or after a lock's retry pause. */
type ScheduledDrain =
  { kind: 'tick' } | { kind: 'immediate'; handle: NodeJS.Immediate } | { kind: 'retry'; handle: NodeJS.Timeout };
