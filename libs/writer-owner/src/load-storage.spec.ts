import { eventually } from '@ledgerline/testing';
import { noConsumers } from './testing/no-consumers.js';
import { collect, requestsOf } from './testing/streams.js';
import { QUICK_TRIM_SETTINGS, startWriterHarness, type WriterHarness } from './testing/harness.js';

const text = (s: string) => new TextEncoder().encode(s);

describe("writer owner: the load report's storage bytes", () => {
  let harness: WriterHarness;
  beforeAll(async () => {
    harness = await startWriterHarness({ consumeBackend: noConsumers, settings: QUICK_TRIM_SETTINGS });
  });
  afterAll(async () => harness.close());

  async function publish(topic: string, from: number, count: number): Promise<void> {
    const requests = Array.from({ length: count }, (_, i) => ({
      message: {
        topic,
        payload: text(`payload-${from + i}`.padEnd(100, '.')),
        producerName: 'p',
        sequenceId: BigInt(from + i),
      },
    }));
    const responses = await collect(harness.topics.publish(requestsOf(requests)));
    expect(responses.map((response) => response.result.case)).toEqual(requests.map(() => 'receipt'));
  }

  const storageBytes = async () => (await harness.writer.owner.load.sample()).storageBytes;
  const statsBytes = async (topic: string) => Number((await harness.topics.getTopicStats({ topic })).sizeBytes);

  it('grows with appends, drops when ledgers are trimmed, and leaves with the topic', async () => {
    const topic = await harness.createTopic('stored');
    // A subscription at the first offset keeps every ledger until it is deleted.
    await harness.cursors.createCursor({ topic, subscription: 'hold', start: { case: 'offset', value: 0n } });
    await publish(topic, 0, 10);
    const afterTen = await storageBytes();
    // Only this topic is loaded: the report is its ledgers' bytes, as its stats count them.
    expect(afterTen).toBe(await statsBytes(topic));
    expect(afterTen).toBeGreaterThanOrEqual(10 * 100);
    await publish(topic, 10, 10);
    const afterTwenty = await storageBytes();
    expect(afterTwenty).toBeGreaterThanOrEqual(afterTen + 10 * 100);

    await harness.cursors.deleteCursor({ topic, subscription: 'hold' });
    await eventually(async () => (await storageBytes()) < afterTwenty / 2, {
      description: 'the closed ledgers to be trimmed once no cursor needs them',
    });
    expect(await storageBytes()).toBe(await statsBytes(topic));

    await harness.topics.unloadTopic({ topic });
    expect(await storageBytes()).toBe(0);
  });
});
