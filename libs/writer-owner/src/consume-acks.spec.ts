import { DATA_PATH_LIMITS } from '@ledgerline/cursor-codec';
import { InitialPosition, SubscriptionType } from '@ledgerline/proto';
import { TestConsumer } from '@ledgerline/ownership/testing';
import { consumeBackend } from './consume-backend.js';
import { startWriterHarness, type WriterHarness } from './testing/harness.js';

describe('writer owner: acks refused at the wire change nothing (over gRPC)', () => {
  let harness: WriterHarness;
  beforeAll(async () => {
    harness = await startWriterHarness({ consumeBackend });
  });
  afterAll(async () => harness.close());

  function consumer(topic: string, name: string) {
    return new TestConsumer(harness.topics, {
      case: 'subscribe',
      value: {
        topic,
        subscription: 'sub',
        type: SubscriptionType.EXCLUSIVE,
        consumerName: name,
        initialPosition: InitialPosition.EARLIEST,
      },
    });
  }

  /** A topic of 3 entries and a consumer that received them all. */
  async function delivered(name: string) {
    const topic = await harness.createTopic(name);
    for (let i = 0; i < 3; i++) {
      await harness.topics.publishOne({ message: { topic, payload: new TextEncoder().encode(`m${i}`) } });
    }
    const first = consumer(topic, 'a');
    first.flow(3);
    await first.until(() => first.entries.length === 3, '3 entries');
    return { topic, first, positions: first.entries.map((e) => e.position!) };
  }

  /** After the refused ack ended the stream: a new consumer gets every entry again, the backlog untouched. */
  async function expectNothingAcked(topic: string): Promise<void> {
    const next = consumer(topic, 'b');
    next.flow(10);
    await next.until(() => next.entries.length === 3, 'every entry again');
    expect((await harness.topics.getTopicStats({ topic })).subscriptions[0]?.backlogMessages).toBe(3n);
    next.close();
  }

  it('refuses an ack over maxAckPositionsPerCall with INVALID_ARGUMENT LIMIT_EXCEEDED', async () => {
    const { topic, first, positions } = await delivered('ack-limit');
    const sent = DATA_PATH_LIMITS.maxAckPositionsPerCall + 1;
    first.send({ case: 'ack', value: { positions: Array.from({ length: sent }, (_, i) => positions[i % 3]!) } });
    await first.until(() => first.ended, 'the stream to end');
    expect(first.error).toMatchObject({ code: 'INVALID_ARGUMENT', reason: 'LIMIT_EXCEEDED' });
    expect(first.error?.message).toContain(`carries ${sent}; maxAckPositionsPerCall is 10000`);
    await expectNothingAcked(topic);
  });

  it('refuses an ack naming entry -1 with INVALID_ARGUMENT INVALID_POSITION', async () => {
    const { topic, first, positions } = await delivered('ack-minus-one');
    const minusOne = { ledgerId: positions[0]!.ledgerId, entryId: -1n };
    first.send({ case: 'ack', value: { positions: [positions[0]!, minusOne] } });
    await first.until(() => first.ended, 'the stream to end');
    expect(first.error).toMatchObject({ code: 'INVALID_ARGUMENT', reason: 'INVALID_POSITION' });
    await expectNothingAcked(topic);
  });
});
