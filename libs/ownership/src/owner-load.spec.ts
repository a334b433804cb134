import { BUSIEST_TOPICS_REPORTED, IDLE_LOAD, LoadMeter, type LoadTotals } from './owner-load.js';

describe('LoadMeter', () => {
  it('reports rates and the CPU share over the interval between two samples', async () => {
    let nowMs = 10_000;
    let cpuMicros = 5_000_000;
    const totals: LoadTotals = {
      messagesIn: 100,
      bytesIn: 1_000,
      messagesOut: 0,
      bytesOut: 0,
      topicsOwned: 2,
      pendingEntries: 0,
    };
    const meter = new LoadMeter(() => ({ ...totals }), { now: () => nowMs, cpuMicros: () => cpuMicros });
    expect(meter.latest).toEqual(IDLE_LOAD);
    expect(await meter.sample()).toMatchObject({ messagesInPerSecond: 0, cpuShare: 0, intervalMs: 0, topicsOwned: 2 });

    nowMs += 2_000;
    cpuMicros += 500_000;
    Object.assign(totals, {
      messagesIn: 300,
      bytesIn: 5_000,
      messagesOut: 50,
      bytesOut: 500,
      topicsOwned: 3,
      pendingEntries: 4,
      storageBytes: 123_456,
    });
    expect(await meter.sample()).toEqual({
      topicsOwned: 3,
      messagesInPerSecond: 100,
      bytesInPerSecond: 2_000,
      messagesOutPerSecond: 25,
      bytesOutPerSecond: 250,
      consumers: 0,
      pendingEntries: 4,
      storageBytes: 123_456,
      cpuShare: 0.25,
      intervalMs: 2_000,
      busiestTopics: [],
    });
    expect(meter.latest.messagesInPerSecond).toBe(100);
  });

  it('names the busiest topics held, busiest first, at most BUSIEST_TOPICS_REPORTED, none idle or new', async () => {
    let nowMs = 0;
    const held = new Map<string, number>([
      ['idle', 7],
      ...Array.from({ length: 20 }, (_, i): [string, number] => [`t${i}`, 1_000]),
    ]);
    const meter = new LoadMeter(
      () => ({
        messagesIn: 0,
        bytesIn: 0,
        messagesOut: 0,
        bytesOut: 0,
        topicsOwned: held.size,
        pendingEntries: 0,
        topicMessages: new Map(held),
      }),
      { now: () => nowMs, cpuMicros: () => 0 },
    );
    await meter.sample();
    nowMs = 2_000;
    for (let i = 0; i < 20; i++) held.set(`t${i}`, 1_000 + 10 * i);
    // Loaded since the last sample with traffic from an earlier stay: no rate of this interval.
    held.set('returned', 50_000);
    const { busiestTopics } = await meter.sample();
    expect(busiestTopics).toHaveLength(BUSIEST_TOPICS_REPORTED);
    expect(busiestTopics[0]).toEqual({ topic: 't19', messagesPerSecond: 95 });
    expect(busiestTopics.map((each) => each.topic)).not.toContain('idle');
    expect(busiestTopics.map((each) => each.topic)).not.toContain('returned');
    expect(busiestTopics.map((each) => each.topic)).not.toContain('t0');
  });

  it('never reports negative traffic when a total goes down', async () => {
    let nowMs = 0;
    let messagesIn = 500;
    const meter = new LoadMeter(
      () => ({ messagesIn, bytesIn: 0, messagesOut: 0, bytesOut: 0, topicsOwned: 0, pendingEntries: 0 }),
      { now: () => nowMs, cpuMicros: () => 0 },
    );
    await meter.sample();
    nowMs = 1_000;
    messagesIn = 100;
    expect((await meter.sample()).messagesInPerSecond).toBe(0);
  });

  it('counts a consume stream as a consumer while it is open', async () => {
    const meter = new LoadMeter(() => ({
      messagesIn: 0,
      bytesIn: 0,
      messagesOut: 0,
      bytesOut: 0,
      topicsOwned: 0,
      pendingEntries: 0,
    }));
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    async function* stream(): AsyncIterable<number> {
      yield 1;
      await held;
      yield 2;
    }
    const iterator = meter.countConsumer(stream())[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ value: 1, done: false });
    expect(meter.consumers).toBe(1);
    expect((await meter.sample()).consumers).toBe(1);
    release();
    expect(await iterator.next()).toEqual({ value: 2, done: false });
    expect(await iterator.next()).toEqual({ value: undefined, done: true });
    expect(meter.consumers).toBe(0);
  });
});
