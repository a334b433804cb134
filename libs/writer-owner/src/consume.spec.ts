import { InitialPosition, SubscriptionType } from '@ledgerline/proto';
import { MAX_CONSUME_RESPONSE_BYTES } from '@ledgerline/ownership';
import { TestConsumer } from '@ledgerline/ownership/testing';
import { consumeBackend } from './consume-backend.js';
import { startWriterHarness, type WriterHarness } from './testing/harness.js';

const text = (s: string) => new TextEncoder().encode(s);

describe('writer owner: consuming through every subscription type (in process)', () => {
  let harness: WriterHarness;
  beforeAll(async () => {
    harness = await startWriterHarness({ consumeBackend });
  });
  afterAll(async () => harness.close());

  async function publish(topic: string, count: number, key?: (i: number) => string, from = 0): Promise<void> {
    for (let i = from; i < from + count; i++) {
      await harness.topics.publishOne({ message: { topic, payload: text(`m${i}`), ...(key ? { key: key(i) } : {}) } });
    }
  }

  function consumer(topic: string, subscription: string, type: SubscriptionType, name: string, extra = {}) {
    return new TestConsumer(harness.topics, {
      case: 'subscribe',
      value: { topic, subscription, type, consumerName: name, initialPosition: InitialPosition.EARLIEST, ...extra },
    });
  }

  it('Exclusive: delivers by permits, refuses a second consumer, and a new consumer gets only what was not acked', async () => {
    const topic = await harness.createTopic('exclusive');
    await publish(topic, 10);
    const first = consumer(topic, 'sub', SubscriptionType.EXCLUSIVE, 'a');
    first.flow(4);
    await first.until(() => first.entries.length === 4, '4 entries');
    const second = consumer(topic, 'sub', SubscriptionType.EXCLUSIVE, 'b');
    await second.until(() => second.ended, 'the second consumer refused');
    expect(second.error?.reason).toBe('CONSUMER_BUSY');
    first.flow(6);
    await first.until(() => first.entries.length === 10, '10 entries');
    first.ack(first.entries.slice(0, 5), 7n);
    await first.until(() => first.events.some((e) => e.event.case === 'ackReceipt'), 'the ack receipt');
    first.close();
    await first.until(() => first.ended, 'the stream to end');
    const third = consumer(topic, 'sub', SubscriptionType.EXCLUSIVE, 'c');
    third.flow(100);
    await third.until(() => third.entries.length === 5, 'the unacked half');
    expect(third.texts()).toEqual(['m5', 'm6', 'm7', 'm8', 'm9']);
    const stats = await harness.topics.getTopicStats({ topic });
    expect(stats.subscriptions[0]).toMatchObject({
      name: 'sub',
      backlogMessages: 5n,
      type: SubscriptionType.EXCLUSIVE,
    });
    third.close();
  });

  it('coalesces entries ready at once into one response for a subscriber that reads several, in order and within the bounds', async () => {
    const topic = await harness.createTopic('coalesced-delivery');
    await publish(topic, 12);
    const entriesPerResponse = (c: TestConsumer) =>
      c.events.filter((e) => e.event.case === 'entry').map((e) => 1 + e.moreEntries.length);
    const reads5 = consumer(topic, 'five', SubscriptionType.EXCLUSIVE, 'a', { maxEntriesPerResponse: 5 });
    reads5.flow(100);
    await reads5.until(() => reads5.entries.length === 12, '12 entries');
    expect(reads5.texts()).toEqual(Array.from({ length: 12 }, (_, i) => `m${i}`));
    expect(entriesPerResponse(reads5).every((count) => count <= 5)).toBe(true);
    expect(entriesPerResponse(reads5).some((count) => count > 1)).toBe(true);
    // A subscriber that predates coalescing (max_entries_per_response 0) gets one entry per response.
    const old = consumer(topic, 'old', SubscriptionType.EXCLUSIVE, 'b');
    old.flow(100);
    await old.until(() => old.entries.length === 12, '12 entries');
    expect(entriesPerResponse(old)).toEqual(Array(12).fill(1));
    // Large entries: a response never carries more than MAX_CONSUME_RESPONSE_BYTES of payloads.
    const large = await harness.createTopic('coalesced-large');
    const payload = new Uint8Array(Math.floor(MAX_CONSUME_RESPONSE_BYTES / 2.5));
    for (let i = 0; i < 5; i++) await harness.topics.publishOne({ message: { topic: large, payload } });
    const big = consumer(large, 'big', SubscriptionType.EXCLUSIVE, 'c', { maxEntriesPerResponse: 1_000 });
    big.flow(100);
    await big.until(() => big.entries.length === 5, '5 large entries');
    expect(entriesPerResponse(big).every((count) => count <= 2)).toBe(true);
    for (const each of [reads5, old, big]) each.close();
  });

  it('Failover: one active consumer; when it leaves, the other takes over with what it had not acked', async () => {
    const topic = await harness.createTopic('failover');
    await publish(topic, 6);
    const a = consumer(topic, 'sub', SubscriptionType.FAILOVER, 'a');
    const b = consumer(topic, 'sub', SubscriptionType.FAILOVER, 'b');
    a.flow(100);
    b.flow(100);
    await a.until(() => a.entries.length === 6, 'a receives everything');
    expect(b.entries).toHaveLength(0);
    a.ack(a.entries.slice(0, 3));
    await harness.topics.getTopicStats({ topic });
    a.close();
    await b.until(() => b.entries.length === 3, 'b takes over');
    expect(b.texts()).toEqual(['m3', 'm4', 'm5']);
    expect(b.events.some((e) => e.event.case === 'activeConsumerChange' && e.event.value.active)).toBe(true);
    b.close();
  });

  it('Shared spreads by permits; Key_Shared keeps every key on one consumer in order', async () => {
    const shared = await harness.createTopic('shared');
    await publish(shared, 8);
    const s1 = consumer(shared, 'sub', SubscriptionType.SHARED, 's1');
    const s2 = consumer(shared, 'sub', SubscriptionType.SHARED, 's2');
    s1.flow(3);
    s2.flow(5);
    await s2.until(() => s1.entries.length + s2.entries.length === 8, 'all eight delivered');
    expect([s1.entries.length, s2.entries.length]).toEqual([3, 5]);
    s1.close();
    s2.close();

    const keyed = await harness.createTopic('key-shared');
    const k1 = consumer(keyed, 'sub', SubscriptionType.KEY_SHARED, 'k1');
    const k2 = consumer(keyed, 'sub', SubscriptionType.KEY_SHARED, 'k2');
    k1.flow(1000);
    k2.flow(1000);
    await publish(keyed, 200, (i) => `key-${i % 20}`);
    await k1.until(() => k1.entries.length + k2.entries.length === 200, 'all 200 delivered');
    const owners = new Map<string, string>();
    for (const [name, c] of [
      ['k1', k1],
      ['k2', k2],
    ] as const) {
      const seen = new Map<string, number>();
      for (const entry of c.entries) {
        const message = entry.messages[0]!;
        const index = Number(Buffer.from(message.payload).toString().slice(1));
        expect(owners.get(message.key!) ?? name).toBe(name);
        owners.set(message.key!, name);
        expect(index).toBeGreaterThan(seen.get(message.key!) ?? -1);
        seen.set(message.key!, index);
      }
    }
    expect(new Set(owners.values()).size).toBe(2);
    k1.close();
    k2.close();
  });

  it('redelivers nacked entries with a redelivery count, and dead-letters after the allowed deliveries', async () => {
    const topic = await harness.createTopic('redelivery');
    await publish(topic, 1);
    const c = consumer(topic, 'sub', SubscriptionType.SHARED, 'n', {
      nackRedeliveryDelayMs: 0n,
      deadLetter: { maxRedeliveries: 2, topic: `${topic}-dlq` },
    });
    c.flow(100);
    for (let delivery = 1; delivery <= 3; delivery++) {
      await c.until(() => c.entries.length === delivery, `delivery ${delivery}`);
      expect(c.entries[delivery - 1]!.redeliveryCount).toBe(delivery - 1);
      c.send({ case: 'nack', value: { positions: [c.entries[delivery - 1]!.position!] } });
    }
    // The dead-letter topic is created by the owner on the first dead letter; wait (bounded) until it holds one.
    const deadline = Date.now() + 20_000;
    let fetched;
    for (;;) {
      fetched = await harness.topics
        .fetchByOffset({ topic: `${topic}-dlq`, offset: 0n, maxEntries: 10 })
        .catch(() => undefined);
      if ((fetched?.entries.length ?? 0) > 0 || Date.now() > deadline) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(fetched!.entries.map((e) => Buffer.from(e.messages[0]!.payload).toString())).toEqual(['m0']);
    expect(c.entries).toHaveLength(3);
    c.close();
  });

  it('redelivers after the ack timeout, and closes consumers with TOPIC_UNLOADED when the topic goes', async () => {
    const topic = await harness.createTopic('ack-timeout');
    await publish(topic, 2);
    const c = consumer(topic, 'sub', SubscriptionType.SHARED, 't', { ackTimeoutMs: 1_000n });
    c.flow(100);
    await c.until(() => c.entries.length === 4, 'both entries twice');
    expect(c.entries.slice(2).map((e) => e.redeliveryCount)).toEqual([1, 1]);
    await harness.topics.unloadTopic({ topic });
    await c.until(() => c.ended, 'the consumer closed');
    expect([c.error?.code, c.error?.reason]).toEqual(['UNAVAILABLE', 'TOPIC_UNLOADED']);
  });
});

describe('writer owner: a subscribe that meets its topic being unloaded', () => {
  let harness: WriterHarness;
  /** Topics whose next lookup by a Consume stream is unloaded before the stream goes on with it. */
  const unloadAfterLookup = new Set<string>();
  beforeAll(async () => {
    harness = await startWriterHarness({
      consumeBackend: (owner) =>
        consumeBackend(
          new Proxy(owner, {
            get(target, property, receiver) {
              if (property !== 'topic') return Reflect.get(target, property, receiver) as unknown;
              return async (name: string) => {
                const topic = await target.topic(name);
                if (unloadAfterLookup.delete(name)) await harness.topics.unloadTopic({ topic: name });
                return topic;
              };
            },
          }),
        ),
    });
  });
  afterAll(async () => harness.close());

  it('ends the stream TOPIC_UNLOADED, which clients follow to the next owner, not MANAGED_LEDGER_CLOSED, which they give up on', async () => {
    const topic = await harness.createTopic('unloaded-under-subscribe');
    await harness.topics.publishOne({ message: { topic, payload: text('m0') } });
    // The subscription exists (its cursor is open in the managed ledger) before the race.
    const first = new TestConsumer(harness.topics, {
      case: 'subscribe',
      value: { topic, subscription: 'sub', type: SubscriptionType.SHARED, initialPosition: InitialPosition.EARLIEST },
    });
    first.flow(10);
    await first.until(() => first.entries.length === 1, 'the entry');
    first.close();
    await first.until(() => first.ended, 'the first stream ended');
    unloadAfterLookup.add(topic);
    const c = new TestConsumer(harness.topics, {
      case: 'subscribe',
      value: { topic, subscription: 'sub', type: SubscriptionType.SHARED, initialPosition: InitialPosition.EARLIEST },
    });
    c.flow(10);
    await c.until(() => c.ended, 'the consume stream ended');
    expect([c.error?.code, c.error?.reason]).toEqual(['UNAVAILABLE', 'TOPIC_UNLOADED']);
    // The topic loads again for the next stream, which is served.
    const next = new TestConsumer(harness.topics, {
      case: 'subscribe',
      value: { topic, subscription: 'sub', type: SubscriptionType.SHARED, initialPosition: InitialPosition.EARLIEST },
    });
    next.flow(10);
    await next.until(() => next.entries.length === 1, 'the entry, from the reloaded topic');
    next.close();
  });
});
