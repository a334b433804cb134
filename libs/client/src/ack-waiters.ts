import type { LedgerlineError } from '@ledgerline/errors';

/**
 * Promises waiting for the same outcome (the owner confirming one command, or
 * every command in flight), settled together. The first wait starts one
 * deadline for all of them: when it passes, they reject with `timedOut()`,
 * so no promise waits for an owner longer than the operation timeout.
 */
export class AckWaiters {
  private waiters: { resolve(): void; reject(error: unknown): void }[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly timeoutMs: number,
    private readonly timedOut: () => LedgerlineError,
  ) {}

  get size(): number {
    return this.waiters.length;
  }

  /** A promise that settles with the others, or rejects at the deadline. */
  wait(): Promise<void> {
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    this.timer ??= setTimeout(() => this.reject(this.timedOut()), this.timeoutMs);
    return done;
  }

  resolve(): void {
    for (const waiter of this.take()) waiter.resolve();
  }

  reject(error: unknown): void {
    for (const waiter of this.take()) waiter.reject(error);
  }

  private take() {
    clearTimeout(this.timer);
    this.timer = undefined;
    return this.waiters.splice(0);
  }
}
