import { createBus, type Bus } from '@ledgerline/bus';
import { InitialPosition, SubscriptionType } from '@ledgerline/proto';
import { eventually, startNats, type ServerProcess } from '@ledgerline/testing';
import { TestConsumer } from '@ledgerline/ownership/testing';
import { READER_GROUP, startReadOnlyHarness, type ReadOnlyHarness } from './testing/index.js';

/** Enough topics that an owner of three getting none of them by rendezvous hashing is a 1 in 3 million chance. */
const TOPICS_PER_ROUND = 40;

function tail(harness: ReadOnlyHarness, owner: number, topic: string): TestConsumer {
  const consumer = new TestConsumer(harness.readOnlyTopics[owner]!, {
    case: 'subscribe',
    value: {
      topic,
      subscription: 'tail',
      type: SubscriptionType.EXCLUSIVE,
      consumerName: 'c',
      initialPosition: InitialPosition.EARLIEST,
    },
  });
  consumer.flow(10_000);
  return consumer;
}

describe('read-only owners of one group share its topics', () => {
  let harness: ReadOnlyHarness;
  beforeAll(async () => {
    harness = await startReadOnlyHarness();
    await harness.addReadOnlyOwner();
    await harness.addReadOnlyOwner();
  });
  afterAll(async () => harness.close());

  async function ownersOf(round: string): Promise<Set<string>> {
    const addresses = new Set<string>();
    for (let i = 0; i < TOPICS_PER_ROUND; i++) {
      const { writerTopic } = await harness.createTopic(`${round}-${i}`);
      addresses.add((await harness.lookup.lookupTopic({ topic: writerTopic, group: READER_GROUP })).advertisedAddress);
    }
    return addresses;
  }

  it('spreads topics over every owner of the group, and onto one added later', async () => {
    const two = harness.readOnly.map((running) => running.owner.identity.advertisedAddress);
    expect([...(await ownersOf('first'))].sort()).toEqual([...two].sort());
    const added = await harness.addReadOnlyOwner();
    const third = harness.readOnly[added]!.owner.identity.advertisedAddress;
    // Lookups see the new owner once its registration is in; topics then land on all three.
    await eventually(async () => (await ownersOf(`probe-${Date.now()}`)).has(third), {
      attempts: 50,
      description: 'a topic to land on the added owner',
    });
    expect([...(await ownersOf('second'))].sort()).toEqual([...two, third].sort());
  });
});

describe('a read-only owner over NATS, when NATS goes away and comes back', () => {
  let nats: ServerProcess;
  let bus: Bus;
  let harness: ReadOnlyHarness;
  beforeAll(async () => {
    nats = await startNats();
    bus = await createBus({ kind: 'nats', servers: [nats.url], name: 'readonly-recovery', reconnectWaitMs: 50 });
    harness = await startReadOnlyHarness({ bus });
    await harness.addReadOnlyOwner();
  });
  afterAll(async () => {
    await harness.close();
    await bus.close();
    await nats.stop();
  });

  it('delivers by the fallback while NATS is down, and is told of new entries again once it is back', async () => {
    const { writerTopic } = await harness.createTopic('recovery');
    const consumer = tail(harness, 0, writerTopic);
    try {
      await harness.publishNumbered(writerTopic, 0, 5);
      await consumer.until(() => consumer.entries.length === 5, 'five entries with NATS up');
      const view = harness.readOnly[0]!.owner.registry.find(writerTopic)!.view;
      expect(view.stats.lacNotifications).toBeGreaterThan(0);
      // Each notification carries when the writer's store confirmed the entry: its delay is on /metrics.
      const propagation = await harness.readOnly[0]!.owner.metrics.lacPropagation.get();
      const observed = propagation.values.find(
        (v) => v.metricName === 'ledgerline_readonly_lac_propagation_seconds_count',
      );
      expect(observed?.value).toBeGreaterThan(0);

      await nats.kill();
      const fallbackBefore = view.stats.lacFallbackReads;
      await harness.publishNumbered(writerTopic, 5, 5);
      await consumer.until(() => consumer.entries.length === 10, 'five entries with NATS down');
      expect(view.stats.lacFallbackReads).toBeGreaterThan(fallbackBefore);

      await nats.restart();
      const notifiedBefore = view.stats.lacNotifications;
      let next = 10;
      // The bus reconnects and resubscribes by itself: entries published from then on are pushed again.
      await eventually(
        async () => {
          await harness.publishNumbered(writerTopic, next++, 1);
          await consumer.until(() => consumer.entries.length === next, `entry ${next - 1}`);
          return view.stats.lacNotifications > notifiedBefore;
        },
        { attempts: 200, intervalMs: 50, description: 'a LAC notification after NATS came back' },
      );
      expect(consumer.texts()).toEqual(Array.from({ length: next }, (_, i) => `m${i}`));
    } finally {
      consumer.close();
      await consumer.until(() => consumer.ended, 'the stream to end');
    }
  });
});
