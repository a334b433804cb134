import { ByteBudget } from './byte-budget.js';

/** A connection's share of the bound, held while one of its publish streams is open. */
export interface ConnectionBudgetLease {
  readonly budget: ByteBudget;
  /** The stream ended: the connection's budget is dropped with its last stream. */
  release(): void;
}

/**
 * One byte budget per client connection (grpc-js names a connection by its
 * peer address and port), shared by every publish stream the connection
 * opens: a producer that opens many streams on one connection is bounded as
 * one, on top of each stream's own bound.
 */
export class ConnectionBudgets {
  private readonly byPeer = new Map<string, { budget: ByteBudget; streams: number }>();

  constructor(private readonly limitBytes: number) {}

  get connections(): number {
    return this.byPeer.size;
  }

  take(peer: string): ConnectionBudgetLease {
    let entry = this.byPeer.get(peer);
    if (entry === undefined) {
      entry = { budget: new ByteBudget(this.limitBytes), streams: 0 };
      this.byPeer.set(peer, entry);
    }
    entry.streams++;
    const held = entry;
    let released = false;
    return {
      budget: held.budget,
      release: () => {
        if (released) return;
        released = true;
        held.streams--;
        if (held.streams === 0 && this.byPeer.get(peer) === held) this.byPeer.delete(peer);
      },
    };
  }
}
