/**
 * A FIFO that one reader drains with `shift()` or `for await`. Writers never
 * wait: whoever pushes bounds what it pushes (producers by maxPendingMessages,
 * consumers by the flow permits they grant). `end()` lets the reader finish
 * what is queued and then stop; `fail(error)` makes the next read throw.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private head = 0;
  private waiter: ((result: IteratorResult<T>) => void) | undefined;
  private failWaiter: ((error: unknown) => void) | undefined;
  private ended = false;
  private failure: unknown;

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    if (this.ended) return;
    const waiter = this.waiter;
    if (waiter !== undefined) {
      this.clearWaiter();
      waiter({ value: item, done: false });
      return;
    }
    this.items.push(item);
  }

  /** No more items; the reader finishes what is queued. */
  end(): void {
    this.ended = true;
    const waiter = this.waiter;
    if (waiter !== undefined && this.size === 0) {
      this.clearWaiter();
      waiter({ value: undefined, done: true });
    }
  }

  /** No more items; the next read after those queued throws `error`. */
  fail(error: unknown): void {
    if (this.ended) return;
    this.failure = error;
    this.ended = true;
    const failWaiter = this.failWaiter;
    if (failWaiter !== undefined && this.size === 0) {
      this.clearWaiter();
      failWaiter(error);
    }
  }

  /** Removes every queued item that matches, returning how many were removed. */
  remove(matches: (item: T) => boolean): number {
    const kept = this.items.slice(this.head).filter((item) => !matches(item));
    const removed = this.size - kept.length;
    this.items = kept;
    this.head = 0;
    return removed;
  }

  /** The next item, waiting for one; `done` once ended and drained. */
  next(): Promise<IteratorResult<T>> {
    if (this.size > 0) {
      const value = this.items[this.head] as T;
      this.items[this.head] = undefined as T;
      this.head++;
      if (this.head > 1024 && this.head * 2 > this.items.length) {
        this.items = this.items.slice(this.head);
        this.head = 0;
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.ended) {
      return this.failure === undefined
        ? Promise.resolve({ value: undefined, done: true })
        : Promise.reject(this.failure);
    }
    return new Promise((resolve, reject) => {
      this.waiter = resolve;
      this.failWaiter = reject;
    });
  }

  private clearWaiter(): void {
    this.waiter = undefined;
    this.failWaiter = undefined;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return { next: () => this.next() };
  }
}
