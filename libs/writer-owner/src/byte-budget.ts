interface Waiter {
  bytes: number;
  resolve: () => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  /** Removed once the waiter leaves the line: a long stream's signal must not gather one per wait. */
  onAbort: () => void;
}

/**
 * A bound on bytes in flight with waiters: `acquire` resolves once the bytes
 * fit (an item larger than the whole bound is let through alone, so it cannot
 * wait forever). Used per topic and per publish stream for backpressure.
 */
export class ByteBudget {
  private used = 0;
  private readonly waiters: Waiter[] = [];

  constructor(readonly limitBytes: number) {}

  get usedBytes(): number {
    return this.used;
  }

  fits(bytes: number): boolean {
    return this.used === 0 || this.used + bytes <= this.limitBytes;
  }

  /**
   * Whether `bytes` would be taken now: no one waits and they fit; with `strict`, within the bound itself,
   * without the pass a lone item larger than the bound gets (a batch taken whole must not pass it).
   */
  canAcquire(bytes: number, strict = false): boolean {
    return this.waiters.length === 0 && (strict ? this.used + bytes <= this.limitBytes : this.fits(bytes));
  }

  /** Takes `bytes` at once, for a caller that asked canAcquire first (two budgets are taken together so). */
  take(bytes: number): void {
    this.used += bytes;
  }

  /** Takes `bytes` now when they fit, else returns a promise that settles once they did. */
  acquire(bytes: number, signal?: AbortSignal): Promise<void> | undefined {
    // Waiters go first, in order: a small item must not overtake a large one (publishes keep their order).
    if (this.waiters.length === 0 && this.fits(bytes)) {
      this.used += bytes;
      return undefined;
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { bytes, resolve, reject, signal, onAbort: () => this.wake() };
      this.waiters.push(waiter);
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
    });
  }

  release(bytes: number): void {
    this.used -= bytes;
    if (this.used < 0) throw new Error(`byte budget released more than it held (${this.used})`);
    this.wake();
  }

  /** Lets waiters through in order, up to the first that does not fit; aborted ones leave the line. */
  private wake(): void {
    for (;;) {
      const first = this.waiters[0];
      if (first === undefined) return;
      if (first.signal?.aborted === true) {
        this.waiters.shift();
        first.reject(first.signal.reason);
        continue;
      }
      if (!this.fits(first.bytes)) return;
      this.waiters.shift();
      first.signal?.removeEventListener('abort', first.onAbort);
      this.used += first.bytes;
      first.resolve();
    }
  }
}
