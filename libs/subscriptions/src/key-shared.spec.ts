import fc from 'fast-check';
import {
  InMemorySource,
  ManualScheduler,
  RecordingSink,
  settle,
  type TestEntry,
} from '@ledgerline/subscriptions/testing';
import type { Consumer } from './consumer.js';
import { stickyKeyHash, StickyKeyConsumerSelector } from './sticky-key-selector.js';
import { Subscription } from './subscription.js';
import { SubscriptionType, type Delivery } from './types.js';

/** Distinct keys the property test draws from. */
const KEY_SPACE = 5_000;
/** Keys drawn about half of the time, so that most histories move keys with unacked messages. */
const HOT_KEYS = 8;

type Action =
  | { kind: 'join' }
  | { kind: 'leave'; pick: number }
  | { kind: 'flow'; pick: number; permits: number }
  | { kind: 'ack'; pick: number; every: number; offset: number }
  | { kind: 'append'; keys: number[] }
  | { kind: 'settle' };

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { arbitrary: fc.constant<Action>({ kind: 'join' }), weight: 2 },
  // Between settles, joins, leaves and acks land while reads are in flight.
  { arbitrary: fc.constant<Action>({ kind: 'settle' }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('leave' as const), pick: fc.nat() }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant('flow' as const),
      pick: fc.nat(),
      permits: fc.integer({ min: 1, max: 300 }),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('ack' as const),
      pick: fc.nat(),
      every: fc.integer({ min: 1, max: 4 }),
      offset: fc.nat(3),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('append' as const),
      // A few hot keys (so keys move between consumers while they have unacked messages) among thousands of cold ones.
      keys: fc.array(fc.oneof(fc.nat(HOT_KEYS - 1), fc.nat(KEY_SPACE - 1)), { minLength: 1, maxLength: 300 }),
    }),
    weight: 3,
  },
);

interface Live {
  name: string;
  consumer: Consumer<TestEntry>;
  /** Entry ids delivered to it and not acknowledged, by key. */
  pending: Map<string, Set<number>>;
}

/**
 * A model of what Key_Shared promises, checked at every delivery: no key is
 * served by two consumers with unacked messages at once, and a consumer gets
 * a key's message only when every earlier one of that key is acknowledged or
 * already its own, and none later is (order per key).
 */
class KeySharedModel {
  readonly live: Live[] = [];
  readonly acked = new Set<number>();
  readonly delivered = new Set<number>();
  readonly violations: string[] = [];
  private joined = 0;

  constructor(
    private readonly sub: Subscription<TestEntry>,
    private readonly source: InMemorySource,
  ) {}

  join(permits = 0): Live {
    const name = `consumer-${this.joined++}`;
    const sink = new RecordingSink<TestEntry>();
    const live: Live = { name, consumer: undefined as unknown as Consumer<TestEntry>, pending: new Map() };
    sink.onDeliver = (d) => this.check(live, d);
    live.consumer = this.sub.addConsumer({ name, type: SubscriptionType.KEY_SHARED, sink });
    if (permits > 0) live.consumer.flow(permits);
    this.live.push(live);
    return live;
  }

  leave(live: Live): void {
    this.live.splice(this.live.indexOf(live), 1);
    live.consumer.close();
  }

  async ack(live: Live, select: (entryId: number) => boolean): Promise<void> {
    const ids = [...live.pending.values()].flatMap((s) => [...s]).filter(select);
    if (ids.length === 0) return;
    await live.consumer.acknowledge({ positions: ids.map((entryId) => ({ ledgerId: 1, entryId })) });
    for (const id of ids) {
      this.acked.add(id);
      const key = this.keyOf(id);
      live.pending.get(key)?.delete(id);
      if (live.pending.get(key)?.size === 0) live.pending.delete(key);
    }
  }

  private keyOf(entryId: number): string {
    return (this.source.entries[entryId] as TestEntry).key as string;
  }

  private check(live: Live, d: Delivery<TestEntry>): void {
    const id = d.entry.position.entryId;
    const key = d.entry.key as string;
    for (const other of this.live) {
      if (other !== live && other.pending.has(key)) {
        this.violations.push(`${key}@${id} to ${live.name} while ${other.name} holds ${[...other.pending.get(key)!]}`);
      }
    }
    const mine = live.pending.get(key) ?? new Set<number>();
    for (const earlier of this.source.entries) {
      const e = earlier.position.entryId;
      if (e >= id) break;
      if (earlier.key === key && !this.acked.has(e) && !mine.has(e)) {
        this.violations.push(`${key}@${id} to ${live.name} before ${key}@${e} was acknowledged or delivered to it`);
      }
    }
    for (const e of mine) {
      if (e > id) this.violations.push(`${key}@${id} to ${live.name} after ${key}@${e}`);
    }
    mine.add(id);
    live.pending.set(key, mine);
    this.delivered.add(id);
  }
}

async function runHistory(actions: readonly Action[]): Promise<void> {
  const source = new InMemorySource(true);
  const sub = new Subscription<TestEntry>({
    name: 'sub',
    source,
    scheduler: new ManualScheduler(),
    limits: { maxReadBatchEntries: 50 },
  });
  const model = new KeySharedModel(sub, source);
  try {
    for (const action of actions) {
      const live =
        model.live.length === 0 ? undefined : model.live[('pick' in action ? action.pick : 0) % model.live.length];
      if (action.kind === 'join') model.join();
      else if (action.kind === 'append') for (const k of action.keys) source.append(`key-${k}`);
      else if (action.kind === 'settle') await settle(sub);
      else if (live === undefined) continue;
      else if (action.kind === 'leave') model.leave(live);
      else if (action.kind === 'flow') live.consumer.flow(action.permits);
      else await model.ack(live, (id) => (id + action.offset) % action.every === 0);
      // One turn of the event loop: a read in flight may finish, or not yet.
      await new Promise((resolve) => setImmediate(resolve));
      expect(model.violations).toEqual([]);
    }
    // Whatever happened, one consumer that acknowledges everything ends with every entry acknowledged.
    for (const live of [...model.live]) model.leave(live);
    const last = model.join(1_000_000);
    for (let round = 0; round <= source.entries.length && !source.allAcknowledged(); round++) {
      await settle(sub);
      await model.ack(last, () => true);
    }
    expect(model.violations).toEqual([]);
    expect(source.allAcknowledged()).toBe(true);
    expect(model.delivered.size).toBe(source.entries.length);
  } finally {
    await sub.close();
  }
}

describe('Key_Shared', () => {
  it('keeps order per key and one consumer per key while consumers join and leave, over thousands of keys', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(actionArb, { minLength: 5, maxLength: 60 }), (actions) => runHistory(actions)),
      { numRuns: 60 },
    );
  });

  it('holds the keys a joining consumer takes over until the previous holder acknowledged them', async () => {
    const source = new InMemorySource();
    const sub = new Subscription<TestEntry>({ name: 'sub', source, scheduler: new ManualScheduler() });
    try {
      const model = new KeySharedModel(sub, source);
      const a = model.join(10_000);
      for (let k = 0; k < 2_000; k++) source.append(`key-${k}`);
      await settle(sub);
      expect(model.delivered.size).toBe(2_000);
      const b = model.join(10_000);
      for (let k = 0; k < 2_000; k++) source.append(`key-${k}`);
      await settle(sub);
      // The second round of keys b now owns waits for a's acks; a's own keys flow on.
      const held = (await sub.stats()).replayPositions;
      expect(held).toBeGreaterThan(0);
      expect(model.delivered.size).toBe(4_000 - held);
      await model.ack(a, () => true);
      await settle(sub);
      expect(model.delivered.size).toBe(4_000);
      expect(b.pending.size).toBeGreaterThan(0);
      expect(model.violations).toEqual([]);
    } finally {
      await sub.close();
    }
  });

  it('spreads keys over consumers by Murmur3 on a hash ring, the same for the same names', () => {
    const ring = (names: string[]) => {
      const selector = new StickyKeyConsumerSelector<string>(100);
      for (const name of names) selector.add(name, name);
      return selector;
    };
    const one = ring(['a', 'b', 'c']);
    const two = ring(['c', 'a', 'b']);
    const counts = new Map<string, number>();
    let disagreements = 0;
    for (let k = 0; k < 30_000; k++) {
      const hash = stickyKeyHash(`key-${k}`);
      const chosen = one.select(hash) as string;
      if (two.select(hash) !== chosen) disagreements++;
      counts.set(chosen, (counts.get(chosen) ?? 0) + 1);
    }
    expect(disagreements).toBe(0);
    expect([...counts.keys()].sort()).toEqual(['a', 'b', 'c']);
    for (const n of counts.values()) expect(n).toBeGreaterThan(5_000);
    // Murmur3 x86 32-bit with seed 0, the reference value for "hello", masked to 31 bits as Pulsar does.
    expect(stickyKeyHash('hello')).toBe(0x248bfa47 & 0x7fffffff);
  });
});

describe('a subscription changing type', () => {
  it('hashes what waits for redelivery by the new type, keeping one consumer per key', async () => {
    const source = new InMemorySource();
    const sub = new Subscription<TestEntry>({ name: 'sub', source, scheduler: new ManualScheduler() });
    try {
      const keys = Array.from({ length: 50 }, (_, k) => `key-${k}`);
      source.appendMany(keys);
      const shared = sub.addConsumer({ name: 's', type: SubscriptionType.SHARED, sink: new RecordingSink() });
      shared.flow(1_000);
      await settle(sub);
      // The Shared consumer leaves with everything unacked: it waits for the Key_Shared consumers.
      shared.close();
      const model = new KeySharedModel(sub, source);
      model.join(1_000);
      model.join(1_000);
      await settle(sub);
      source.appendMany(keys);
      await settle(sub);
      expect(model.violations).toEqual([]);
      expect(model.delivered.size).toBe(100);
      expect(model.live.every((l) => l.pending.size > 0)).toBe(true);
    } finally {
      await sub.close();
    }
  });
});
