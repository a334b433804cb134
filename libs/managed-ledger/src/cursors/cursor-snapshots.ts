import type { CursorState } from '@ledgerline/cursor-codec';
import { LedgerlineError } from '@ledgerline/errors';
import { LedgerStoreReason } from '@ledgerline/ledger-store';
import type { LedgerContext } from '../context.js';
import type { CursorPersistence, SnapshotWrite } from './cursor-persistence.js';
import { isBadVersion } from '../errors.js';

/**
 * After each failed snapshot write the next one waits twice as long, doubling
 * at most this many times: at most 2^6 = 64 snapshot intervals between tries,
 * so a cursor whose store came back is persisted again within a bounded time.
 */
export const MAX_PERSIST_BACKOFF_DOUBLINGS = 6;

/** What the snapshot writes need from their cursor. */
export interface SnapshotSubject {
  readonly name: string;
  /** True while the cursor may still persist (not closed, fenced or deleted). */
  isOpen(): boolean;
  /** Throws the cursor's closed or fenced error unless it is open. */
  checkOpen(): void;
  /** The state to persist now, and the reset epoch the node records with it. */
  snapshot(): { state: CursorState; resetEpoch: number };
  persisted(write: SnapshotWrite): void;
  /** The node or the cursor ledger changed under us: another owner took the cursor. */
  fenced(error: LedgerlineError): void;
}

/**
 * When a cursor's state is written: whether it changed since the last
 * snapshot, the rate limit (at most one write per snapshotIntervalMs, longer
 * after failures), and the one write in flight. Where it is written is
 * CursorPersistence's concern.
 */
export class CursorSnapshots {
  private dirty = false;
  private persisting: Promise<void> | undefined;
  private persistTimer: NodeJS.Timeout | undefined;
  private lastPersistAtMs = 0;
  private persistFailures = 0;
  /** Snapshot writes started so far: a write holds the state as it was when it started. */
  private started = 0;
  /** Callers of whenPersisted, each waiting for the write numbered `after` (or a later one) to land. */
  private waiters: { after: number; resolve: () => void; reject: (error: unknown) => void }[] = [];

  constructor(
    private readonly ctx: LedgerContext,
    private readonly persistence: CursorPersistence,
    private readonly cursor: SnapshotSubject,
  ) {}

  /** The state changed: it is written within the rate limit. */
  changed(): void {
    this.dirty = true;
    this.schedulePersist();
  }

  /** The state changed and must be durable before the caller goes on (a seek). */
  async persistChange(writeNode: boolean): Promise<void> {
    this.dirty = true;
    await this.persistNow(writeNode);
  }

  async persistNow(writeNode: boolean): Promise<void> {
    while (this.persisting !== undefined) await this.persisting.catch(() => undefined);
    if (!this.dirty) return;
    // Changes a fenced, deleted or closed cursor still holds can no longer be persisted: saying so beats a silent success.
    this.cursor.checkOpen();
    // This write covers what a pending timer would write; the next change waits a full interval from now.
    this.clearTimer();
    this.dirty = false;
    this.persisting = this.writeSnapshot(writeNode);
    try {
      await this.persisting;
    } finally {
      this.persisting = undefined;
      if (this.dirty && this.cursor.isOpen()) this.schedulePersist();
    }
  }

  /**
   * Resolves once a snapshot holding the state as it is now has landed,
   * without writing one for it: the next scheduled write (within the
   * interval) or any earlier one does. Rejects when the cursor stops first.
   */
  whenPersisted(): Promise<void> {
    if (!this.dirty && this.persisting === undefined) return Promise.resolve();
    try {
      this.cursor.checkOpen();
    } catch (error) {
      return Promise.reject(error);
    }
    // Dirty: the next write to start takes the state in; clean: the one in flight already holds it.
    const after = this.dirty ? this.started + 1 : this.started;
    return new Promise((resolve, reject) => this.waiters.push({ after, resolve, reject }));
  }

  /** No write comes any more (closed, deleted, fenced): whoever waits for one hears why. */
  stop(): void {
    this.clearTimer();
    let why: unknown;
    try {
      this.cursor.checkOpen();
    } catch (error) {
      why = error;
    }
    const waiting = this.waiters;
    this.waiters = [];
    for (const waiter of waiting) waiter.reject(why ?? new Error(`cursor ${this.cursor.name} stopped`));
  }

  /** The snapshot being written, if any, settled either way (it may still switch the node). */
  inFlight(): Promise<void> | undefined {
    return this.persisting?.catch(() => undefined);
  }

  clearTimer(): void {
    if (this.persistTimer !== undefined) clearTimeout(this.persistTimer);
    this.persistTimer = undefined;
  }

  /** Persists at most once per snapshotIntervalMs (rate limit), real time. */
  private schedulePersist(): void {
    if (this.persistTimer !== undefined || this.persisting !== undefined || !this.cursor.isOpen()) return;
    const interval =
      this.ctx.config.cursor.snapshotIntervalMs * 2 ** Math.min(this.persistFailures, MAX_PERSIST_BACKOFF_DOUBLINGS);
    const waitMs = Math.max(0, this.lastPersistAtMs + interval - this.ctx.now());
    this.persistTimer = setTimeout(() => {
      this.persistTimer = undefined;
      void this.persistNow(false).catch(() => undefined);
    }, waitMs);
    this.persistTimer.unref();
  }

  private async writeSnapshot(writeNode: boolean): Promise<void> {
    const { state, resetEpoch } = this.cursor.snapshot();
    const write = ++this.started;
    this.lastPersistAtMs = this.ctx.now();
    try {
      this.cursor.persisted(
        await this.persistence.persist(state, { resetEpoch, lastActiveMs: this.ctx.now() }, writeNode),
      );
      this.landed(write);
      this.persistFailures = 0;
      this.ctx.metrics.cursorSnapshots.inc({ topic: this.ctx.topic });
    } catch (err) {
      this.onPersistFailure(err);
      throw err;
    }
  }

  private landed(write: number): void {
    if (this.waiters.length === 0) return;
    const waiting = this.waiters;
    this.waiters = [];
    for (const waiter of waiting) {
      if (waiter.after <= write) waiter.resolve();
      else this.waiters.push(waiter);
    }
  }

  private onPersistFailure(err: unknown): void {
    const error = LedgerlineError.from(err);
    if (isBadVersion(error) || error.reason === LedgerStoreReason.LEDGER_FENCED) {
      this.cursor.fenced(error);
      this.stop();
      return;
    }
    this.dirty = true;
    this.persistFailures++;
    this.ctx.logger.warn(
      { topic: this.ctx.topic, cursor: this.cursor.name, error: error.toString() },
      'cursor snapshot failed; retrying',
    );
  }
}
