import fc from 'fast-check';
import {
  InMemorySource,
  ManualScheduler,
  RecordingSink,
  settle,
  type TestEntry,
} from '@ledgerline/subscriptions/testing';
import type { Consumer } from './consumer.js';
import { Subscription } from './subscription.js';
import { SubscriptionType, type Delivery } from './types.js';

type Action =
  | { kind: 'join'; permits: number; ackTimeout: boolean }
  | { kind: 'leave'; pick: number }
  | { kind: 'flow'; pick: number; permits: number }
  | { kind: 'ack'; pick: number; every: number; cumulative: boolean }
  | { kind: 'nack'; pick: number; every: number }
  | { kind: 'redeliver'; pick: number }
  | { kind: 'append'; count: number; batch: number }
  | { kind: 'time'; ms: number }
  | { kind: 'settle' };

const ACK_TIMEOUT_MS = 1_000;
const NACK_DELAY_MS = 300;

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  fc.record({ kind: fc.constant('join' as const), permits: fc.integer({ min: 0, max: 50 }), ackTimeout: fc.boolean() }),
  fc.record({ kind: fc.constant('leave' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('flow' as const), pick: fc.nat(), permits: fc.integer({ min: 1, max: 50 }) }),
  fc.record({
    kind: fc.constant('ack' as const),
    pick: fc.nat(),
    every: fc.integer({ min: 1, max: 3 }),
    cumulative: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('nack' as const), pick: fc.nat(), every: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ kind: fc.constant('redeliver' as const), pick: fc.nat() }),
  fc.record({
    kind: fc.constant('append' as const),
    count: fc.integer({ min: 1, max: 30 }),
    batch: fc.integer({ min: 1, max: 3 }),
  }),
  fc.record({ kind: fc.constant('time' as const), ms: fc.integer({ min: 1, max: 1_500 }) }),
  fc.constant<Action>({ kind: 'settle' }),
);

interface Live {
  name: string;
  consumer: Consumer<TestEntry>;
  /** Entry ids last delivered to it and not known to be acknowledged: what it acks and nacks. */
  held: Set<number>;
}

/**
 * What every subscription type promises, checked at every delivery: nothing
 * acknowledged is delivered, only the active consumer receives (Exclusive,
 * Failover), and the redelivery count is the number of deliveries before; at
 * the end, nothing unacknowledged is lost.
 */
class Model {
  readonly live: Live[] = [];
  readonly deliveries = new Map<number, number>();
  readonly violations: string[] = [];
  private joined = 0;

  constructor(
    private readonly sub: Subscription<TestEntry>,
    private readonly source: InMemorySource,
    private readonly type: SubscriptionType,
  ) {}

  join(permits: number, ackTimeout: boolean): void {
    if (this.type === SubscriptionType.EXCLUSIVE && this.live.length > 0) return;
    const sink = new RecordingSink<TestEntry>();
    const live: Live = {
      name: `c${this.joined++}`,
      consumer: undefined as unknown as Consumer<TestEntry>,
      held: new Set(),
    };
    sink.onDeliver = (d) => this.check(live, d);
    // A consumer that loses Failover gives back what it held.
    sink.activeChanged = (active) => {
      if (!active) live.held.clear();
    };
    live.consumer = this.sub.addConsumer({
      name: live.name,
      type: this.type,
      sink,
      nackRedeliveryDelayMs: NACK_DELAY_MS,
      ackTimeoutMs: ackTimeout ? ACK_TIMEOUT_MS : 0,
    });
    if (permits > 0) live.consumer.flow(permits);
    this.live.push(live);
  }

  leave(live: Live): void {
    this.live.splice(this.live.indexOf(live), 1);
    live.consumer.close();
  }

  async ack(live: Live, every: number, cumulative: boolean): Promise<void> {
    const held = [...live.held].sort((a, b) => a - b);
    if (held.length === 0) return;
    const single = this.type === SubscriptionType.EXCLUSIVE || this.type === SubscriptionType.FAILOVER;
    if (cumulative && single) {
      const upTo = held[Math.floor(held.length / every) - 1] ?? held[0]!;
      await live.consumer.acknowledge({ cumulative: { ledgerId: 1, entryId: upTo } });
    } else {
      const ids = held.filter((id) => id % every === 0);
      await live.consumer.acknowledge({ positions: ids.map((entryId) => ({ ledgerId: 1, entryId })) });
    }
    // Whatever is acknowledged now is held by nobody.
    for (const l of this.live) for (const id of [...l.held]) if (this.acknowledged(id)) l.held.delete(id);
  }

  nack(live: Live, every: number): void {
    live.consumer.nack([...live.held].filter((id) => id % every === 0).map((entryId) => ({ ledgerId: 1, entryId })));
  }

  acknowledged(id: number): boolean {
    return this.source.isAcknowledged({ ledgerId: 1, entryId: id });
  }

  private check(live: Live, d: Delivery<TestEntry>): void {
    const id = d.entry.position.entryId;
    if (this.acknowledged(id)) this.violations.push(`${id} delivered to ${live.name} after it was acknowledged`);
    if (!live.consumer.active) this.violations.push(`${id} delivered to ${live.name}, which is not active`);
    const before = this.deliveries.get(id) ?? 0;
    if (d.redeliveryCount !== before)
      this.violations.push(`${id} delivered with count ${d.redeliveryCount} after ${before}`);
    this.deliveries.set(id, before + 1);
    // Released entries (nack, timeout, leave) belong to whoever gets them next.
    for (const other of this.live) other.held.delete(id);
    live.held.add(id);
  }
}

async function runHistory(type: SubscriptionType, actions: readonly Action[]): Promise<void> {
  const source = new InMemorySource(true);
  const scheduler = new ManualScheduler();
  const sub = new Subscription<TestEntry>({ name: 'sub', source, scheduler, limits: { maxReadBatchEntries: 20 } });
  const model = new Model(sub, source, type);
  try {
    for (const action of actions) {
      const pick = 'pick' in action ? action.pick : 0;
      const live = model.live.length === 0 ? undefined : model.live[pick % model.live.length];
      if (action.kind === 'join') model.join(action.permits, action.ackTimeout);
      else if (action.kind === 'append')
        for (let i = 0; i < action.count; i++) source.append(`k${i % 7}`, action.batch);
      else if (action.kind === 'time') scheduler.advance(action.ms);
      else if (action.kind === 'settle') await settle(sub);
      else if (live === undefined) continue;
      else if (action.kind === 'leave') model.leave(live);
      else if (action.kind === 'flow') live.consumer.flow(action.permits);
      else if (action.kind === 'ack') await model.ack(live, action.every, action.cumulative);
      else if (action.kind === 'nack') model.nack(live, action.every);
      else live.consumer.redeliverUnacknowledged();
      await new Promise((resolve) => setImmediate(resolve));
      expect(model.violations).toEqual([]);
    }
    // Then one consumer that acknowledges everything it gets: every entry ends acknowledged, none lost.
    for (const l of [...model.live]) model.leave(l);
    model.join(1_000_000, false);
    const last = model.live[0]!;
    for (let round = 0; round <= source.entries.length && !source.allAcknowledged(); round++) {
      await settle(sub);
      await model.ack(last, 1, false);
    }
    expect(model.violations).toEqual([]);
    expect(source.allAcknowledged()).toBe(true);
    expect(model.deliveries.size).toBe(source.entries.length);
  } finally {
    await sub.close();
  }
}

describe.each([
  SubscriptionType.EXCLUSIVE,
  SubscriptionType.FAILOVER,
  SubscriptionType.SHARED,
  SubscriptionType.KEY_SHARED,
])('%s under random joins, leaves, acks, nacks, timeouts and redeliveries', (type) => {
  it('never delivers what is acknowledged, counts redeliveries, and loses nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(actionArb, { minLength: 5, maxLength: 60 }), (actions) => runHistory(type, actions)),
      { numRuns: 40 },
    );
  });
});
