import type { PublishResponse, PublishResult } from '@ledgerline/proto';
import { noConsumers } from './testing/no-consumers.js';
import { collect, requestsOf } from './testing/streams.js';
import { startWriterHarness, type WriterHarness } from './testing/harness.js';

const text = (s: string) => new TextEncoder().encode(s);
const MAX_PER_REQUEST = 6;

/** Every entry's answer, in the order the entries were sent (message, then more, request after request). */
function answers(responses: PublishResponse[]): Array<PublishResult['result']> {
  return responses.flatMap((response) => [response.result, ...response.more.map((more) => more.result)]);
}

describe('writer owner: coalesced publish requests (several entries per request)', () => {
  let harness: WriterHarness;
  beforeAll(async () => {
    harness = await startWriterHarness({
      consumeBackend: noConsumers,
      settings: { maxMessageSizeBytes: 64 * 1024, maxPendingEntriesPerTopic: 4, maxMessagesPerPublishRequest: 6 },
    });
  });
  afterAll(async () => harness.close());

  const fetchPayloads = async (topic: string): Promise<string[]> => {
    const fetched = await harness.topics.fetchByOffset({ topic, offset: 0n, maxEntries: 100 });
    return fetched.entries.flatMap((entry) => entry.messages.map((m) => Buffer.from(m.payload).toString()));
  };

  it('stores each entry of a request as its own entry, in order, with one receipt each, and announces its limit', async () => {
    const topic = await harness.createTopic('coalesced-order');
    const entry = (i: number) => ({ topic, payload: text(`m${i}`), producerName: 'p', sequenceId: BigInt(i) });
    const responses = await collect(
      harness.topics.publish(
        requestsOf([
          { message: entry(0) },
          { message: entry(1), more: [2, 3, 4, 5, 6].map(entry) },
          { message: entry(7), more: [entry(8)] },
        ]),
      ),
    );
    expect(responses.map((r) => r.more.length)).toEqual([0, 5, 1]);
    expect(responses.map((r) => r.maxMessagesPerRequest)).toEqual([MAX_PER_REQUEST, MAX_PER_REQUEST, MAX_PER_REQUEST]);
    const all = answers(responses);
    expect(all.map((a) => a.case)).toEqual(Array(9).fill('receipt'));
    expect(all.map((a) => [a.value?.sequenceId, (a.value as { firstOffset: bigint }).firstOffset])).toEqual(
      Array.from({ length: 9 }, (_, i) => [BigInt(i), BigInt(i)]),
    );
    const entryIds = all.map((a) => (a.value as { position: { entryId: bigint } }).position.entryId);
    expect(new Set(entryIds).size).toBe(9);
    expect(await fetchPayloads(topic)).toEqual(Array.from({ length: 9 }, (_, i) => `m${i}`));
  });

  it('answers a refused entry in the middle with its own failure and stores the entries around it', async () => {
    const topic = await harness.createTopic('coalesced-failure');
    const responses = await collect(
      harness.topics.publish(
        requestsOf([
          {
            message: { topic, payload: text('a'), sequenceId: 1n },
            more: [
              { topic, payload: new Uint8Array(70 * 1024), sequenceId: 2n },
              { topic, payload: text('b'), sequenceId: 3n },
              { topic: 'persistent://t/ns/nope', payload: text('x'), sequenceId: 4n },
              { topic, payload: text('c'), sequenceId: 5n },
            ],
          },
          { message: { topic, payload: text('d'), sequenceId: 6n } },
        ]),
      ),
    );
    const all = answers(responses);
    expect(all.map((a) => a.case)).toEqual(['receipt', 'failure', 'receipt', 'failure', 'receipt', 'receipt']);
    expect(all[1]!.value).toMatchObject({ sequenceId: 2n, code: 8, reason: 'MESSAGE_TOO_LARGE' });
    expect(all[3]!.value).toMatchObject({ sequenceId: 4n, code: 5 });
    expect(
      all.filter((a) => a.case === 'receipt').map((a) => (a.value as { firstOffset: bigint }).firstOffset),
    ).toEqual([0n, 1n, 2n, 3n]);
    expect(await fetchPayloads(topic)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('deduplicates across and within coalesced requests', async () => {
    const topic = await harness.createTopic('coalesced-dedup');
    const entry = (sequenceId: number, payload: string) => ({
      topic,
      payload: text(payload),
      producerName: 'p',
      sequenceId: BigInt(sequenceId),
    });
    const responses = await collect(
      harness.topics.publish(
        requestsOf([
          { message: entry(1, 'one'), more: [entry(2, 'two'), entry(3, 'three')] },
          // 2 and 3 again (a resend after a reconnect), then 4 new, then 4 again within the same request.
          { message: entry(2, 'two'), more: [entry(3, 'three'), entry(4, 'four'), entry(4, 'four')] },
        ]),
      ),
    );
    const all = answers(responses);
    expect(all.map((a) => a.case)).toEqual(Array(7).fill('receipt'));
    const receipts = all.map((a) => a.value as { sequenceId: bigint; duplicate: boolean; firstOffset: bigint });
    expect(receipts.map((r) => [r.sequenceId, r.duplicate])).toEqual([
      [1n, false],
      [2n, false],
      [3n, false],
      [2n, true],
      [3n, true],
      [4n, false],
      [4n, true],
    ]);
    expect(receipts[5]!.firstOffset).toBe(3n);
    expect(await fetchPayloads(topic)).toEqual(['one', 'two', 'three', 'four']);
  });

  it('refuses each entry of a request carrying more than the announced limit, and the stream goes on', async () => {
    const topic = await harness.createTopic('coalesced-limit');
    const entry = (i: number) => ({ topic, payload: text(`m${i}`), sequenceId: BigInt(i) });
    const responses = await collect(
      harness.topics.publish(
        requestsOf([
          { message: entry(0), more: Array.from({ length: MAX_PER_REQUEST }, (_, i) => entry(i + 1)) },
          { message: entry(10), more: [entry(11)] },
        ]),
      ),
    );
    const all = answers(responses);
    expect(all).toHaveLength(MAX_PER_REQUEST + 3);
    expect(all.slice(0, MAX_PER_REQUEST + 1).map((a) => [a.case, (a.value as { reason?: string }).reason])).toEqual(
      Array(MAX_PER_REQUEST + 1).fill(['failure', 'INVALID_REQUEST']),
    );
    expect(all.slice(MAX_PER_REQUEST + 1).map((a) => a.case)).toEqual(['receipt', 'receipt']);
    expect(await fetchPayloads(topic)).toEqual(['m10', 'm11']);
  });
});
