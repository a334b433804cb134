import { refusal } from '@ledgerline/testing';
import { noConsumers } from './testing/no-consumers.js';
import { collect, requestsOf } from './testing/streams.js';
import { startWriterHarness, type WriterHarness } from './testing/harness.js';

const text = (s: string) => new TextEncoder().encode(s);

describe('writer owner: DeleteRecords', () => {
  let harness: WriterHarness;
  beforeAll(async () => {
    // Two entries per ledger; a subscription at the start holds retention's own trimming back.
    harness = await startWriterHarness({
      consumeBackend: noConsumers,
      settings: { maxEntriesPerLedger: 2, minLedgerAgeMs: 0 },
    });
  });
  afterAll(async () => harness.close());

  async function publish(topic: string, count: number): Promise<void> {
    const requests = Array.from({ length: count }, (_, i) => ({ message: { topic, payload: text(`m${i}`) } }));
    const responses = await collect(harness.topics.publish(requestsOf(requests)));
    expect(responses.map((response) => response.result.case)).toEqual(requests.map(() => 'receipt'));
  }

  it('deletes the messages before an offset: reads below it are OFFSET_TRIMMED, its whole ledgers go, subscriptions move past', async () => {
    const topic = await harness.createTopic('deleted-records');
    await harness.cursors.createCursor({
      topic,
      subscription: 'readers',
      start: { case: 'offset', value: 0n },
    });
    await publish(topic, 7);
    const before = await harness.topics.getTopicStats({ topic });
    expect(before.ledgers).toBe(4);

    expect(await harness.topics.deleteRecords({ topic, beforeOffset: 5n })).toMatchObject({ lowWatermark: 5n });

    expect(await refusal(harness.topics.fetchByOffset({ topic, offset: 3n, maxEntries: 10 }))).toMatchObject({
      code: 'OUT_OF_RANGE',
      reason: 'OFFSET_TRIMMED',
      details: { earliest_offset: '5' },
    });
    expect((await harness.topics.findPosition({ topic, target: { case: 'offset', value: 0n } })).offset).toBe(5n);
    const fetched = await harness.topics.fetchByOffset({ topic, offset: 5n, maxEntries: 10 });
    expect(fetched.entries.map((entry) => entry.firstOffset)).toEqual([5n, 6n]);
    const after = await harness.topics.getTopicStats({ topic });
    // The ledgers of offsets 0-1 and 2-3 are gone; the one of 4-5 stays, offset 4 unreadable in it.
    expect(after.ledgers).toBe(2);
    expect(after.earliestOffset).toBe(5n);
    // The subscription was acknowledged up to the entry holding offset 5: its backlog is offsets 5 and 6.
    expect(after.subscriptions.find((subscription) => subscription.name === 'readers')?.backlogMessages).toBe(2n);
  });

  it('answers -1 as the next offset, keeps the watermark where it is for a lower offset, and refuses one past the end', async () => {
    const topic = await harness.createTopic('deleted-all');
    await publish(topic, 3);
    expect(await harness.topics.deleteRecords({ topic, beforeOffset: 2n })).toMatchObject({ lowWatermark: 2n });
    expect(await harness.topics.deleteRecords({ topic, beforeOffset: 1n })).toMatchObject({ lowWatermark: 2n });
    expect(await refusal(harness.topics.deleteRecords({ topic, beforeOffset: 4n }))).toMatchObject({
      code: 'OUT_OF_RANGE',
      reason: 'OFFSET_OUT_OF_RANGE',
      details: { offset: '4', next_offset: '3' },
    });
    expect(await harness.topics.deleteRecords({ topic, beforeOffset: -1n })).toMatchObject({ lowWatermark: 3n });
    expect((await harness.topics.fetchByOffset({ topic, offset: 3n, maxEntries: 10 })).entries).toEqual([]);
    expect(await refusal(harness.topics.fetchByOffset({ topic, offset: 2n, maxEntries: 10 }))).toMatchObject({
      reason: 'OFFSET_TRIMMED',
      details: { earliest_offset: '3' },
    });
  });
});
