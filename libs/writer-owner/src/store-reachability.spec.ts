import { StoreReachability } from './store-reachability.js';

/*
 * The verdict on the ledger store, driven by hand: a clock moved by the test
 * and tries the test answers or fails.
 */

interface Harness {
  reachability: StoreReachability;
  events: string[];
  /** The tries made so far, each settled by the test. */
  tries: { answer: () => void; fail: () => void }[];
  advance(ms: number): void;
}

function harness(boundMs = 2_000, intervalMs = 500): Harness {
  let nowMs = 0;
  const events: string[] = [];
  const tries: Harness['tries'] = [];
  const probe = () =>
    new Promise<void>((resolve, reject) => tries.push({ answer: resolve, fail: () => reject(new Error('cut')) }));
  const reachability = new StoreReachability(
    probe,
    { storeUnreachableReleaseMs: boundMs, ledgerStoreCheckIntervalMs: intervalMs },
    {
      unreachable: () => events.push('unreachable'),
      stillUnreachable: () => events.push('still'),
      reachable: () => events.push('reachable'),
    },
    () => nowMs,
  );
  return { reachability, events, tries, advance: (ms) => (nowMs += ms) };
}

/** Lets the reactions to settled tries run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('StoreReachability', () => {
  it('stays reachable while tries are answered, and through failures shorter than the bound', async () => {
    const { reachability, events, tries, advance } = harness();
    for (let step = 0; step < 2; step++) {
      advance(500);
      reachability.tick();
      tries.at(-1)!.fail();
    }
    advance(500);
    reachability.tick();
    tries.at(-1)!.answer();
    await settle();
    advance(1_900);
    reachability.tick();
    expect(events).toEqual([]);
    expect(reachability.reachable).toBe(true);
  });

  it('turns unreachable once the first unanswered try waited the bound, and reachable at the next answer', async () => {
    const { reachability, events, tries, advance } = harness();
    // Tries at 500, 1000, 1500, 2000 and 2500 ms: the first has waited the bound at 2500.
    for (let step = 0; step < 4; step++) {
      advance(500);
      reachability.tick();
    }
    await settle();
    expect(events).toEqual([]);
    advance(500);
    reachability.tick();
    await settle();
    expect(events).toEqual(['unreachable']);
    expect(reachability.reachable).toBe(false);
    advance(500);
    reachability.tick();
    expect(events).toEqual(['unreachable', 'still']);
    // A try held up by the cut and answered at the heal counts: the store is back.
    tries[0]!.answer();
    await settle();
    expect(events).toEqual(['unreachable', 'still', 'reachable']);
    expect(reachability.reachable).toBe(true);
    advance(500);
    reachability.tick();
    await settle();
    expect(events).toHaveLength(3);
  });

  it('takes a stalled event loop for a stall, not a cut: with no try waiting, and with an answer that came meanwhile', async () => {
    const { reachability, events, tries, advance } = harness();
    advance(500);
    reachability.tick();
    tries.at(-1)!.answer();
    await settle();
    // Nothing ran for 5 s (a long collection, a blocking call): the try after it is new, not late.
    advance(5_000);
    reachability.tick();
    await settle();
    expect(events).toEqual([]);
    // Another stall while that try is out; its answer arrived during the stall and is read in the same turn
    // as the tick that follows (timers run before the loop reads its sockets).
    advance(5_000);
    const waiting = tries.at(-1)!;
    reachability.tick();
    waiting.answer();
    await settle();
    expect(events).toEqual([]);
    expect(reachability.reachable).toBe(true);
  });

  it('keeps at most 8 tries in flight, and never judges with a bound of 0', () => {
    const busy = harness();
    for (let step = 0; step < 20; step++) busy.reachability.tick();
    expect(busy.tries).toHaveLength(8);
    const off = harness(0);
    expect(off.reachability.enabled).toBe(false);
    off.reachability.start();
    off.reachability.stop();
    expect(off.tries).toHaveLength(0);
  });

  it('tries at most every half bound, so two tries fit in it', () => {
    expect(harness(2_000, 500).reachability.intervalMs).toBe(500);
    expect(harness(600, 500).reachability.intervalMs).toBe(300);
  });
});
