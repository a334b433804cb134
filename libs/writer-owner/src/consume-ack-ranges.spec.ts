import type { Entry } from '@ledgerline/proto';
import { DATA_PATH_LIMITS } from '@ledgerline/cursor-codec';
import { InitialPosition, SubscriptionType } from '@ledgerline/proto';
import { TestConsumer } from '@ledgerline/ownership/testing';
import { consumeBackend } from './consume-backend.js';
import { startWriterHarness, type WriterHarness } from './testing/harness.js';

describe('writer owner: acks as ranges (over gRPC, into the managed cursor)', () => {
  let harness: WriterHarness;
  beforeAll(async () => {
    harness = await startWriterHarness({ consumeBackend });
  });
  afterAll(async () => harness.close());

  function consumer(topic: string, name: string, type = SubscriptionType.SHARED) {
    return new TestConsumer(harness.topics, {
      case: 'subscribe',
      value: { topic, subscription: 'sub', type, consumerName: name, initialPosition: InitialPosition.EARLIEST },
    });
  }

  async function published(name: string, count: number): Promise<string> {
    const topic = await harness.createTopic(name);
    for (let i = 0; i < count; i++) {
      await harness.topics.publishOne({ message: { topic, payload: new TextEncoder().encode(`m${i}`) } });
    }
    return topic;
  }

  const ids = (entries: readonly Entry[]) => entries.map((e) => Number(e.position!.entryId));
  const range = (entries: readonly Entry[], first: number, last: number) => ({
    ledgerId: entries[first]!.position!.ledgerId,
    firstEntryId: entries[first]!.position!.entryId,
    lastEntryId: entries[last]!.position!.entryId,
  });
  const backlog = async (topic: string) =>
    (await harness.topics.getTopicStats({ topic })).subscriptions[0]?.backlogMessages;

  it('says it takes ranges, applies them with single positions, and redelivers exactly the rest after a reconnect', async () => {
    const topic = await published('ranges-land', 12);
    const first = consumer(topic, 'a');
    first.flow(12);
    await first.until(() => first.entries.length === 12, '12 entries');
    const subscribed = first.events.find((e) => e.event.case === 'subscribed');
    expect(subscribed?.event.value).toMatchObject({ acceptsAckRanges: true });
    const got = first.entries;
    first.send({
      case: 'ack',
      value: { ranges: [range(got, 0, 3), range(got, 6, 8)], positions: [got[10]!.position!], requestId: 1n },
    });
    await first.until(() => first.events.some((e) => e.event.case === 'ackReceipt'), 'the ack receipt');
    expect(await backlog(topic)).toBe(4n);
    first.close();
    await first.until(() => first.ended, 'the stream to end');

    const next = consumer(topic, 'b');
    next.flow(12);
    await next.until(() => next.entries.length === 4, 'the 4 entries not acknowledged');
    const again = next.events.find((e) => e.event.case === 'subscribed');
    expect(again?.event.case === 'subscribed' && again.event.value.markDelete?.entryId).toBe(3n);
    expect(ids(next.entries)).toEqual([4, 5, 9, 11]);
    next.close();
  });

  it('hands the unacknowledged half of what a consumer received to the other consumer when it leaves', async () => {
    const topic = await published('ranges-half', 10);
    const first = consumer(topic, 'a');
    first.flow(10);
    await first.until(() => first.entries.length === 10, '10 entries');
    const other = consumer(topic, 'b');
    other.flow(10);
    first.send({ case: 'ack', value: { ranges: [range(first.entries, 0, 4)], requestId: 1n } });
    await first.until(() => first.events.some((e) => e.event.case === 'ackReceipt'), 'the ack receipt');
    first.close();
    await other.until(() => other.entries.length === 5, 'the 5 entries the first consumer left');
    expect(ids(other.entries)).toEqual([5, 6, 7, 8, 9]);
    expect(other.entries.every((e) => e.redeliveryCount === 1)).toBe(true);
    expect(await backlog(topic)).toBe(5n);
    other.close();
  });

  it.each([
    ['names entries past the end of the topic', (got: Entry[]) => ({ ...range(got, 1, 2), lastEntryId: 3n })],
    ['names a ledger the topic does not have', (got: Entry[]) => ({ ...range(got, 1, 2), ledgerId: 999_999n })],
  ])('refuses an ack whose range %s with INVALID_ARGUMENT, applying none of it', async (what, bad) => {
    const topic = await published(`ranges-missing-${what.split(' ')[1]}`, 3);
    const first = consumer(topic, 'a', SubscriptionType.EXCLUSIVE);
    first.flow(3);
    await first.until(() => first.entries.length === 3, '3 entries');
    first.send({ case: 'ack', value: { positions: [first.entries[0]!.position!], ranges: [bad(first.entries)] } });
    await first.until(() => first.ended, 'the stream to end');
    expect(first.error).toMatchObject({ code: 'INVALID_ARGUMENT', reason: 'POSITION_OUT_OF_RANGE' });
    expect(await backlog(topic)).toBe(3n);
  });

  it('refuses a range naming more entries than maxAckPositionsPerCall with LIMIT_EXCEEDED, applying none of it', async () => {
    const topic = await published('ranges-limit', 3);
    const first = consumer(topic, 'a', SubscriptionType.EXCLUSIVE);
    first.flow(3);
    await first.until(() => first.entries.length === 3, '3 entries');
    const long = { ...range(first.entries, 1, 2), lastEntryId: BigInt(DATA_PATH_LIMITS.maxAckPositionsPerCall) };
    first.send({ case: 'ack', value: { positions: [first.entries[0]!.position!], ranges: [long] } });
    await first.until(() => first.ended, 'the stream to end');
    expect(first.error).toMatchObject({ code: 'INVALID_ARGUMENT', reason: 'LIMIT_EXCEEDED' });
    expect(first.error?.message).toContain('a range its length');
    expect(await backlog(topic)).toBe(3n);
  });
});
