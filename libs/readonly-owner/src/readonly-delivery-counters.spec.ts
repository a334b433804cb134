import { InitialPosition, SubscriptionType } from '@ledgerline/proto';
import { TestConsumer } from '@ledgerline/ownership/testing';
import { startReadOnlyHarness, type ReadOnlyHarness } from './testing/index.js';

/*
 * A read-only owner counts what it delivers by reader topic, through the
 * topic's counter children looked up once per Consume stream (not by label on
 * every delivery): messages, and payload bytes, of the responses it writes by hand.
 */
describe('read-only owner: delivery counters', () => {
  let harness: ReadOnlyHarness;
  beforeAll(async () => {
    harness = await startReadOnlyHarness();
    await harness.addReadOnlyOwner();
  });
  afterAll(async () => harness.close());

  async function counted(name: 'messagesOut' | 'bytesOut', topic: string): Promise<number> {
    const { values } = await harness.readOnly[0]!.owner.metrics[name].get();
    return values.find((value) => value.labels['topic'] === topic)?.value ?? 0;
  }

  it('counts the messages and payload bytes delivered, by reader topic', async () => {
    const { writerTopic, readerTopic } = await harness.createTopic('counted');
    await harness.writerCursors.createCursor({
      topic: writerTopic,
      subscription: 'read-side',
      start: { case: 'initialPosition', value: InitialPosition.EARLIEST },
    });
    // Payloads m0 .. m11: 2 bytes each for m0 to m9, 3 for m10 and m11.
    await harness.publishNumbered(writerTopic, 0, 12);
    const reader = new TestConsumer(harness.readOnlyTopics[0]!, {
      case: 'subscribe',
      value: {
        topic: writerTopic,
        subscription: 'read-side',
        type: SubscriptionType.EXCLUSIVE,
        consumerName: 'c',
        initialPosition: InitialPosition.EARLIEST,
      },
    });
    reader.flow(100);
    await reader.until(() => reader.entries.length === 12, '12 entries');
    expect(reader.texts()).toEqual(Array.from({ length: 12 }, (_, i) => `m${i}`));
    expect(await counted('messagesOut', readerTopic)).toBe(12);
    expect(await counted('bytesOut', readerTopic)).toBe(10 * 2 + 2 * 3);
    reader.close();
    await reader.until(() => reader.ended, 'the stream to end');
  });
});
