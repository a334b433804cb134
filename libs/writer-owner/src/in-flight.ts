/**
 * Work under way that a transfer waits for, as a count: each entry of the
 * publish path takes a slot and gives it back once answered. A count and a
 * list of waiters rather than a set of promises, one settled per entry, which
 * cost two promises and their reactions on every message.
 */
export class InFlight {
  private count = 0;
  private waiting: (() => void)[] = [];

  get size(): number {
    return this.count;
  }

  /** Takes `count` slots at once (entries handed to the ledger together); `done` gives them back. */
  add(count: number): void {
    this.count += count;
  }

  /** Gives back `count` slots taken with add. */
  done(count: number): void {
    this.count -= count;
    if (count > 0 && this.count === 0) this.wakeIdle();
  }

  /** Takes a slot; the function returned gives it back (once, however often it is called). */
  begin(): () => void {
    this.count++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (--this.count > 0) return;
      this.wakeIdle();
    };
  }

  private wakeIdle(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const wake of waiting) wake();
  }

  /** Resolves once nothing is under way (at once when nothing is). */
  whenIdle(): Promise<void> {
    return this.count === 0 ? Promise.resolve() : new Promise<void>((resolve) => this.waiting.push(resolve));
  }
}
