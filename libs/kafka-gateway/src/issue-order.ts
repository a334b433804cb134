/** One turn in an IssueOrder: wait for `turn`, do the work, call `issued` once it is handed on. */
export interface IssueTurn {
  readonly turn: Promise<void>;
  /** Lets the next taker of the key start; safe to call more than once. */
  issued(): void;
}

/**
 * Keeps work in the order it was taken, per key, up to the point where it is
 * handed on: a Kafka broker stores one connection's produce requests for a
 * partition in the order they arrived, but the gateway works on several of
 * them at once, and a request whose topic lookup misses the cache would
 * otherwise be overtaken by the one behind it. Only the hand-over is ordered:
 * the answers still overlap, so a producer's pipelining is kept. Offset
 * commits use it too, calling `issued` once the commit is stored, so one
 * group-partition's commits are applied one at a time.
 */
export class IssueOrder {
  private readonly tails = new Map<string, Promise<void>>();

  /** Taken synchronously, in arrival order; the entry is gone once the last taker has issued. */
  take(key: string): IssueTurn {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    this.tails.set(key, mine);
    let done = false;
    return {
      turn: previous,
      issued: () => {
        if (done) return;
        done = true;
        release();
        if (this.tails.get(key) === mine) this.tails.delete(key);
      },
    };
  }

  /** Keys with work waiting or under way (bounded by the requests in flight). */
  get size(): number {
    return this.tails.size;
  }
}
