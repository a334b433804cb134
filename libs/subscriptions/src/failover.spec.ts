import {
  InMemorySource,
  ManualScheduler,
  RecordingSink,
  settle,
  type TestEntry,
} from '@ledgerline/subscriptions/testing';
import { Subscription } from './subscription.js';
import { SubscriptionType, type ConsumerOptions } from './types.js';

const open: Subscription<TestEntry>[] = [];

function setup(partitionIndex?: number) {
  const source = new InMemorySource();
  const sub = new Subscription<TestEntry>({ name: 'sub', source, scheduler: new ManualScheduler(), partitionIndex });
  open.push(sub);
  return { source, sub };
}

function connect(sub: Subscription<TestEntry>, name: string, extra: Partial<ConsumerOptions<TestEntry>> = {}) {
  const sink = new RecordingSink<TestEntry>();
  const consumer = sub.addConsumer({ name, type: SubscriptionType.FAILOVER, sink, ...extra });
  consumer.flow(1000);
  return { sink, consumer };
}

afterEach(async () => {
  for (const sub of open.splice(0)) await sub.close();
});

describe('Failover', () => {
  it('delivers to one active consumer, picked by name; one that loses the role is told', async () => {
    const { source, sub } = setup();
    const b = connect(sub, 'b');
    const a = connect(sub, 'a');
    expect(a.consumer.active).toBe(true);
    expect(b.consumer.active).toBe(false);
    expect(b.sink.activeChanges).toEqual([false]);
    expect(a.sink.activeChanges).toEqual([]);
    source.appendMany(Array.from({ length: 5 }, () => 'k'));
    await settle(sub);
    expect(a.sink.entryIds()).toEqual([0, 1, 2, 3, 4]);
    expect(b.sink.deliveries).toHaveLength(0);
    expect((await sub.stats()).consumers.map((c) => [c.name, c.active])).toEqual([
      ['b', false],
      ['a', true],
    ]);
  });

  it('switches when the active consumer leaves: nothing acked is redelivered, nothing unacked is lost', async () => {
    const { source, sub } = setup();
    const a = connect(sub, 'a');
    const b = connect(sub, 'b');
    source.appendMany(Array.from({ length: 10 }, () => 'k'));
    await settle(sub);
    expect(a.sink.entryIds()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    await a.consumer.acknowledge({ cumulative: { ledgerId: 1, entryId: 3 } });
    await a.consumer.acknowledge({
      positions: [
        { ledgerId: 1, entryId: 6 },
        { ledgerId: 1, entryId: 8 },
      ],
    });
    a.consumer.close();
    expect(b.sink.activeChanges).toEqual([true]);
    source.append('k');
    await settle(sub);
    expect(b.sink.entryIds()).toEqual([4, 5, 7, 9, 10]);
    expect(b.sink.deliveries.map((d) => d.redeliveryCount)).toEqual([1, 1, 1, 1, 0]);
    await b.consumer.acknowledge({ cumulative: { ledgerId: 1, entryId: 10 } });
    expect(source.allAcknowledged()).toBe(true);
  });

  it('hands the unacked messages of the old active consumer to a new one that sorts first', async () => {
    const { source, sub } = setup();
    const m = connect(sub, 'm');
    source.appendMany(['k', 'k', 'k']);
    await settle(sub);
    await m.consumer.acknowledge({ positions: [{ ledgerId: 1, entryId: 0 }] });
    const first = connect(sub, 'a');
    expect(m.sink.activeChanges).toEqual([false]);
    expect(first.consumer.active).toBe(true);
    await settle(sub);
    expect(first.sink.entryIds()).toEqual([1, 2]);
    expect(m.consumer.stats().unackedMessages).toBe(0);
  });

  it('orders by priority level before name, and spreads partitions by partitionIndex', async () => {
    const { sub } = setup();
    connect(sub, 'a', { priorityLevel: 1 });
    const z = connect(sub, 'z', { priorityLevel: 0 });
    expect(z.consumer.active).toBe(true);

    const partitioned = setup(1).sub;
    const pa = connect(partitioned, 'a');
    const pb = connect(partitioned, 'b');
    expect([pa.consumer.active, pb.consumer.active]).toEqual([false, true]);
  });
});
