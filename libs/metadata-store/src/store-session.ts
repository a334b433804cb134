import type { MetadataSession } from './store.js';
import { unexpectedRejection } from '@ledgerline/errors';

/** What a backend does for the sessions it hands out. */
export interface SessionBackend {
  /** Extends the session's life by its TTL; false when the store no longer knows it (it expired). */
  renew(sessionId: string, ttlMs: number): Promise<boolean>;
  /** Ends the session on close: removes it and its ephemeral nodes. */
  release(sessionId: string): Promise<void>;
  /** Called once when the session is found expired: the backend sweeps its ephemeral nodes. */
  expired(sessionId: string): void;
}

/** Quick renewal attempts after a failed one, spread over one tick (a third of the TTL). */
const RETRIES_PER_TICK = 4;

/**
 * A session as its owner sees it. A timer renews it every third of its TTL,
 * and a failed renewal is tried again after a twelfth of the TTL.
 * The owner gives the session up on its own as soon as a full TTL has passed
 * since the start of the last renewal that succeeded, so it never believes in
 * a session the store has already let go (a lease holder stops in time even
 * when the store is unreachable).
 */
export class StoreSession implements MetadataSession {
  private ended = false;
  private wasExpired = false;
  private renewed = 0;
  private renewedAtMs: number;
  private renewing = false;
  private readonly listeners: (() => void)[] = [];
  private readonly timer: NodeJS.Timeout;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly id: string,
    readonly ttlMs: number,
    private readonly backend: SessionBackend,
    private readonly forget: (session: StoreSession) => void,
    openedAtMs: number,
  ) {
    this.renewedAtMs = openedAtMs;
    this.timer = setInterval(() => this.tick().catch(unexpectedRejection), Math.max(10, Math.floor(ttlMs / 3)));
    this.timer.unref();
  }

  get renewals(): number {
    return this.renewed;
  }

  get expired(): boolean {
    if (!this.ended && Date.now() - this.renewedAtMs >= this.ttlMs) this.markExpired();
    return this.ended;
  }

  onExpired(listener: () => void): void {
    if (this.wasExpired) {
      queueMicrotask(listener);
      return;
    }
    if (!this.ended) this.listeners.push(listener);
  }

  async close(): Promise<void> {
    if (this.ended) return;
    this.end();
    await this.backend.release(this.id);
  }

  /** Ends the session because the store let it go; fires the listeners once. */
  markExpired(): void {
    if (this.ended) return;
    this.end();
    this.wasExpired = true;
    this.backend.expired(this.id);
    for (const listener of this.listeners.splice(0)) {
      try {
        listener();
      } catch {
        // A listener's failure must not keep the others from hearing about the expiry.
      }
    }
  }

  private end(): void {
    this.ended = true;
    clearInterval(this.timer);
    clearTimeout(this.retryTimer);
    this.forget(this);
  }

  private async tick(): Promise<void> {
    if (this.expired || this.renewing) return;
    this.renewing = true;
    const startedAtMs = Date.now();
    try {
      if (await this.backend.renew(this.id, this.ttlMs)) {
        if (!this.ended) {
          this.renewedAtMs = startedAtMs;
          this.renewed++;
        }
      } else {
        this.markExpired();
      }
    } catch {
      // The store is unreachable (a dropped connection is back in milliseconds): try again soon
      // rather than at the next tick, and keep trying until the TTL runs out (checked by `expired`).
      this.scheduleRetry();
    } finally {
      this.renewing = false;
    }
  }

  private scheduleRetry(): void {
    if (this.ended || this.retryTimer !== undefined) return;
    this.retryTimer = setTimeout(
      () => {
        this.retryTimer = undefined;
        this.tick().catch(unexpectedRejection);
      },
      Math.max(10, Math.floor(this.ttlMs / RETRIES_PER_TICK / 3)),
    );
    this.retryTimer.unref();
  }
}
