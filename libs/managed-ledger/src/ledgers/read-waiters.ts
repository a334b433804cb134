import { LedgerlineError } from '@ledgerline/errors';
import { ManagedLedgerReason } from '../reasons.js';

export interface WaitOptions {
  /** Give up after this many milliseconds (resolves false). */
  timeoutMs?: number;
  /** Give up when aborted (resolves false). */
  signal?: AbortSignal;
}

interface Waiter {
  resolve(arrived: boolean): void;
  reject(err: Error): void;
}

/**
 * Readers parked until new entries are confirmed. Every confirmation wakes
 * them all; each re-reads and parks again if it found nothing for it. The
 * number parked at once is bounded.
 */
export class ReadWaiters {
  private readonly waiters = new Set<Waiter>();

  constructor(private readonly maxWaiters: number) {}

  get size(): number {
    return this.waiters.size;
  }

  /** Resolves true when woken, false on timeout or abort. */
  wait(options: WaitOptions = {}): Promise<boolean> {
    if (options.signal?.aborted) return Promise.resolve(false);
    if (this.waiters.size >= this.maxWaiters) {
      return Promise.reject(
        new LedgerlineError(
          'RESOURCE_EXHAUSTED',
          ManagedLedgerReason.TOO_MANY_READ_WAITERS,
          `${this.maxWaiters} readers already wait for entries (maxReadWaiters)`,
        ),
      );
    }
    return new Promise<boolean>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => finish(false);
      const finish = (arrived: boolean, err?: Error) => {
        if (!this.waiters.delete(waiter)) return;
        if (timer !== undefined) clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        if (err === undefined) resolve(arrived);
        else reject(err);
      };
      const waiter: Waiter = { resolve: (arrived) => finish(arrived), reject: (err) => finish(false, err) };
      this.waiters.add(waiter);
      if (options.timeoutMs !== undefined) timer = setTimeout(() => finish(false), options.timeoutMs);
      options.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  notifyAll(): void {
    for (const waiter of [...this.waiters]) waiter.resolve(true);
  }

  failAll(err: Error): void {
    for (const waiter of [...this.waiters]) waiter.reject(err);
  }
}
