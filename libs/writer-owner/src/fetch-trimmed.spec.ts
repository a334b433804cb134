import { eventually, refusal } from '@ledgerline/testing';
import { noConsumers } from './testing/no-consumers.js';
import { collect, requestsOf } from './testing/streams.js';
import { QUICK_TRIM_SETTINGS, startWriterHarness, type WriterHarness } from './testing/harness.js';

const text = (s: string) => new TextEncoder().encode(s);

describe('writer owner: a fetch by offset below what retention kept', () => {
  let harness: WriterHarness;
  beforeAll(async () => {
    harness = await startWriterHarness({ consumeBackend: noConsumers, settings: QUICK_TRIM_SETTINGS });
  });
  afterAll(async () => harness.close());

  async function publish(topic: string, count: number): Promise<void> {
    // A named producer: its deduplication snapshots move the dedup cursor, which trimming also waits for.
    const requests = Array.from({ length: count }, (_, i) => ({
      message: { topic, payload: text(`m${i}`), producerName: 'p', sequenceId: BigInt(i) },
    }));
    const responses = await collect(harness.topics.publish(requestsOf(requests)));
    expect(responses.map((response) => response.result.case)).toEqual(requests.map(() => 'receipt'));
  }

  /** The first retained offset, once trimming has removed offset 0. */
  async function trimmedUpTo(topic: string): Promise<bigint> {
    const earliest = async () =>
      (await harness.topics.findPosition({ topic, target: { case: 'offset', value: 0n } })).offset;
    await eventually(async () => (await earliest()) > 0n, { description: 'the first ledgers to be trimmed' });
    return earliest();
  }

  it('is refused at once with OUT_OF_RANGE naming the earliest retained offset, also while it would wait', async () => {
    const topic = await harness.createTopic('trimmed');
    await publish(topic, 7);
    const earliest = await trimmedUpTo(topic);
    const startedAt = Date.now();
    const refused = await refusal(
      harness.topics.fetchByOffset({ topic, offset: 0n, maxEntries: 10, maxWaitMs: 20_000n }),
    );
    expect(refused).toMatchObject({
      code: 'OUT_OF_RANGE',
      reason: 'OFFSET_TRIMMED',
      details: { topic, offset: '0', earliest_offset: String(earliest) },
    });
    expect(refused.message).toContain(`the earliest retained offset is ${earliest}`);
    // Not the 20 s the fetch would have waited at the end of the topic.
    expect(Date.now() - startedAt).toBeLessThan(10_000);
    const fromEarliest = await harness.topics.fetchByOffset({ topic, offset: earliest, maxEntries: 10 });
    expect(fromEarliest.entries[0]!.firstOffset).toBe(earliest);
    expect(fromEarliest.nextOffset).toBe(7n);
  });

  it('is refused also when retention kept no message at all, naming the next offset as the earliest', async () => {
    const topic = await harness.createTopic('emptied');
    await publish(topic, 2);
    // An unload closes the ledger holding both entries with a last deduplication snapshot; the topic loads again
    // on the next call with a new, empty ledger, and trimming removes the closed one.
    await harness.topics.unloadTopic({ topic });
    expect(await trimmedUpTo(topic)).toBe(2n);
    const refused = await refusal(
      harness.topics.fetchByOffset({ topic, offset: 1n, maxEntries: 10, maxWaitMs: 20_000n }),
    );
    expect(refused).toMatchObject({ code: 'OUT_OF_RANGE', details: { earliest_offset: '2' } });
    // The end of the topic is not trimmed: a fetch there waits for the next message as before.
    expect((await harness.topics.fetchByOffset({ topic, offset: 2n, maxEntries: 10 })).entries).toEqual([]);
  });
});
