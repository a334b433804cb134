import { forEachBounded } from './bounded-pool.js';

/** A promise and its resolve/reject, so a test decides when each piece of work ends. */
function deferred(): { promise: Promise<void>; resolve: () => void; reject: (error: Error) => void } {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every pending promise callback run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('forEachBounded', () => {
  it('never runs more than `concurrency` items at once, and runs every item once', async () => {
    const gates = Array.from({ length: 10 }, deferred);
    const started: number[] = [];
    let running = 0;
    let most = 0;
    const done = forEachBounded(
      gates.map((_, i) => i),
      3,
      async (i) => {
        started.push(i);
        most = Math.max(most, ++running);
        await gates[i]!.promise;
        running--;
      },
    );
    for (const gate of gates) {
      await settle();
      expect(running).toBeLessThanOrEqual(3);
      gate.resolve();
    }
    await done;
    expect(most).toBe(3);
    expect(started.sort((a, b) => a - b)).toEqual(gates.map((_, i) => i));
  });

  it('reads an async source only as fast as workers free up', async () => {
    let pulled = 0;
    async function* source() {
      for (let i = 0; i < 100; i++) {
        pulled++;
        yield i;
      }
    }
    const gate = deferred();
    const done = forEachBounded(source(), 2, () => gate.promise);
    await settle();
    // Two in the workers' hands; the generator has not been asked for a third.
    expect(pulled).toBe(2);
    gate.resolve();
    await done;
    expect(pulled).toBe(100);
  });

  it('stops taking items after a failure and throws it once the items in flight settle', async () => {
    const gates = Array.from({ length: 6 }, deferred);
    const started: number[] = [];
    let settled = 0;
    const done = forEachBounded(
      gates.map((_, i) => i),
      2,
      async (i) => {
        started.push(i);
        try {
          await gates[i]!.promise;
        } finally {
          settled++;
        }
      },
    );
    let outcome: unknown = 'pending';
    done.then(
      () => (outcome = 'resolved'),
      (error: unknown) => (outcome = error),
    );
    await settle();
    gates[0]!.reject(new Error('boom'));
    await settle();
    // Item 1 is still in flight: the call waits for it rather than leave it running on its own.
    expect(outcome).toBe('pending');
    gates[1]!.resolve();
    await settle();
    expect(outcome).toEqual(new Error('boom'));
    expect(started).toEqual([0, 1]);
    expect(settled).toBe(2);
  });

  it('throws a failure of the source after the items in flight settle', async () => {
    async function* source() {
      yield 1;
      throw new Error('listing failed');
    }
    const seen: number[] = [];
    await expect(forEachBounded(source(), 4, async (i) => void seen.push(i))).rejects.toThrow('listing failed');
    expect(seen).toEqual([1]);
  });

  it('refuses a concurrency below one', async () => {
    await expect(forEachBounded([1], 0, async () => undefined)).rejects.toThrow(/positive integer/);
  });
});
