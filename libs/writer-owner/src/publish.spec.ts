import { getEventListeners, getMaxListeners } from 'node:events';
import { eventually, refusal } from '@ledgerline/testing';
import { noConsumers } from './testing/no-consumers.js';
import { collect, requestsOf } from './testing/streams.js';
import { startWriterHarness, type WriterHarness } from './testing/harness.js';

const text = (s: string) => new TextEncoder().encode(s);

describe('writer owner: publishing in process (SQLite, in-process bus)', () => {
  let harness: WriterHarness;
  beforeAll(async () => {
    harness = await startWriterHarness({
      consumeBackend: noConsumers,
      settings: { maxMessageSizeBytes: 64 * 1024, maxPendingEntriesPerTopic: 8 },
    });
  });
  afterAll(async () => harness.close());

  it('stores pipelined publishes in request order with contiguous offsets (more in flight than the topic lets through at once), and batches advance by their size', async () => {
    const topic = await harness.createTopic('ordered');
    const requests = Array.from({ length: 200 }, (_, i) =>
      i === 100
        ? {
            message: {
              topic,
              messages: [{ payload: text('a') }, { payload: text('b'), key: 'k' }, { payload: text('c') }],
            },
          }
        : { message: { topic, payload: text(`m${i}`) } },
    );
    const responses = await collect(harness.topics.publish(requestsOf(requests)));
    expect(responses).toHaveLength(200);
    let expected = 0n;
    for (const response of responses) {
      expect(response.result.case).toBe('receipt');
      const receipt = response.result.value as { firstOffset: bigint; lastOffset: bigint };
      expect(receipt.firstOffset).toBe(expected);
      expected = receipt.lastOffset + 1n;
    }
    expect(expected).toBe(202n);
    const fetched = await harness.topics.fetchByOffset({ topic, offset: 100n, maxEntries: 2 });
    expect(fetched.nextOffset).toBe(202n);
    expect(
      fetched.entries[0]!.messages.map((m) => [Buffer.from(m.payload).toString(), m.key, m.offset, m.batchIndex]),
    ).toEqual([
      ['a', undefined, 100n, 0],
      ['b', 'k', 101n, 1],
      ['c', undefined, 102n, 2],
    ]);
    expect(Buffer.from(fetched.entries[1]!.messages[0]!.payload).toString()).toBe('m101');
  });

  it("leaves no listener on the owner's drain signal once its publish streams have ended", async () => {
    const topic = await harness.createTopic('listeners');
    const drainSignal = harness.writer.owner.drainSignal;
    const before = getEventListeners(drainSignal, 'abort').length;
    // More streams than EventTarget's leak warning allows listeners (10): a producer reconnecting for days opens many.
    for (let stream = 0; stream < 12; stream++) {
      const responses = await collect(harness.topics.publish(requestsOf([{ message: { topic, payload: text('x') } }])));
      expect(responses.map((r) => r.result.case)).toEqual(['receipt']);
    }
    expect(getEventListeners(drainSignal, 'abort')).toHaveLength(before);
  });

  it('lets many publish streams listen for the drain at once without a listener-leak warning', async () => {
    const topic = await harness.createTopic('many-streams');
    const drainSignal = harness.writer.owner.drainSignal;
    let release = (): void => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    async function* heldOpen(): AsyncIterable<{ message: { topic: string; payload: Uint8Array } }> {
      yield { message: { topic, payload: text('x') } };
      await released;
    }
    const streams = Array.from({ length: 24 }, () => collect(harness.topics.publish(heldOpen())));
    await eventually(() => getEventListeners(drainSignal, 'abort').length >= 24, {
      description: 'every stream listening for the drain',
    });
    // Node warns (MaxListenersExceededWarning, once per process) when listeners pass the signal's limit, 10 by default.
    const limit = getMaxListeners(drainSignal);
    expect(limit).toBeGreaterThanOrEqual(getEventListeners(drainSignal, 'abort').length);
    release();
    for (const responses of await Promise.all(streams))
      expect(responses.map((r) => r.result.case)).toEqual(['receipt']);
  });

  it('answers a re-sent sequence id as a duplicate with the original position, also after the topic is reloaded', async () => {
    const topic = await harness.createTopic('dedup');
    const first = await harness.topics.publishOne({
      message: { topic, producerName: 'p1', sequenceId: 5n, payload: text('x') },
    });
    expect(first.receipt!.duplicate).toBe(false);
    const again = await harness.topics.publishOne({
      message: { topic, producerName: 'p1', sequenceId: 5n, payload: text('x') },
    });
    expect(again.receipt!.duplicate).toBe(true);
    expect(again.receipt!.position).toEqual(first.receipt!.position);
    const older = await harness.topics.publishOne({
      message: { topic, producerName: 'p1', sequenceId: 3n, payload: text('x') },
    });
    expect(older.receipt!.duplicate).toBe(true);
    await harness.topics.unloadTopic({ topic });
    const afterReload = await harness.topics.publishOne({
      message: { topic, producerName: 'p1', sequenceId: 5n, payload: text('x') },
    });
    expect(afterReload.receipt!.duplicate).toBe(true);
    const next = await harness.topics.publishOne({
      message: { topic, producerName: 'p1', sequenceId: 6n, payload: text('y') },
    });
    expect(next.receipt!.duplicate).toBe(false);
    expect(next.receipt!.firstOffset).toBe(1n);
    const stats = await harness.topics.getTopicStats({ topic });
    expect(stats.dedupHits).toBeGreaterThanOrEqual(1n);
    expect(stats.subscriptions).toEqual([]);
    // The topic page's ledger list: one open ledger holding both messages, none trimmed yet.
    expect(stats.earliestOffset).toBe(0n);
    expect(stats.nextOffset).toBe(2n);
    expect(stats.ledgerStats.at(-1)).toMatchObject({ open: true, lastOffset: 1n });
    expect(stats.ledgerStats.reduce((sum, ledger) => sum + ledger.entries, 0n)).toBe(2n);
  });

  it('refuses bad publishes with clear statuses and keeps serving the stream', async () => {
    const topic = await harness.createTopic('refusals');
    const missing = await refusal(
      harness.topics.publishOne({ message: { topic: 'persistent://t/ns/nope', payload: text('x') } }),
    );
    expect(missing.code).toBe('NOT_FOUND');
    const garbage = await refusal(
      harness.topics.publishOne({ message: { topic: 'not a // topic', payload: text('x') } }),
    );
    expect(garbage.code).toBe('INVALID_ARGUMENT');
    const tooLarge = await refusal(
      harness.topics.publishOne({ message: { topic, payload: new Uint8Array(70 * 1024) } }),
    );
    expect([tooLarge.code, tooLarge.reason]).toEqual(['RESOURCE_EXHAUSTED', 'MESSAGE_TOO_LARGE']);
    const responses = await collect(
      harness.topics.publish(
        requestsOf([
          { message: { topic, payload: new Uint8Array(70 * 1024), sequenceId: 1n } },
          { message: { topic, payload: text('fine'), sequenceId: 2n } },
          {},
        ]),
      ),
    );
    expect(responses.map((r) => r.result.case)).toEqual(['failure', 'receipt', 'failure']);
    expect(responses[0]!.result.value).toMatchObject({ sequenceId: 1n, reason: 'MESSAGE_TOO_LARGE', code: 8 });
  });

  it('refuses publishes to a terminated topic with FAILED_PRECONDITION / TOPIC_TERMINATED, on both RPCs and after a reload', async () => {
    const topic = await harness.createTopic('terminated');
    const stored = await harness.topics.publishOne({
      message: { topic, producerName: 'p', sequenceId: 1n, payload: text('before') },
    });
    expect(stored.receipt!.firstOffset).toBe(0n);
    const loaded = harness.writer.owner.registry.find(topic)!;
    await loaded.ledger.terminate();
    const one = await refusal(
      harness.topics.publishOne({ message: { topic, producerName: 'p', sequenceId: 2n, payload: text('after') } }),
    );
    expect([one.code, one.reason]).toEqual(['FAILED_PRECONDITION', 'TOPIC_TERMINATED']);
    const streamed = await collect(
      harness.topics.publish(
        requestsOf([{ message: { topic, producerName: 'p', sequenceId: 3n, payload: text('x') } }]),
      ),
    );
    expect(streamed.map((r) => r.result.value)).toMatchObject([
      { sequenceId: 3n, code: 9, reason: 'TOPIC_TERMINATED' },
    ]);
    // Termination is recorded with the managed ledger: the next owner (here, this one after an unload) refuses too.
    await harness.topics.unloadTopic({ topic });
    const reloaded = await refusal(
      harness.topics.publishOne({ message: { topic, producerName: 'p', sequenceId: 4n, payload: text('later') } }),
    );
    expect([reloaded.code, reloaded.reason]).toEqual(['FAILED_PRECONDITION', 'TOPIC_TERMINATED']);
    // What was stored before stays readable, and nothing refused was stored.
    const fetched = await harness.topics.fetchByOffset({ topic, offset: 0n, maxEntries: 10 });
    expect(fetched.entries.map((e) => Buffer.from(e.messages[0]!.payload).toString())).toEqual(['before']);
    expect(fetched.nextOffset).toBe(1n);
  });

  it('refuses topics of a read-only namespace, naming the writer topic', async () => {
    await harness.createTopic('source', 'writers');
    await harness.admin.createNamespace({ namespace: 't/readers' });
    await harness.admin.setWriterNamespace({ namespace: 't/readers', writerNamespace: 't/writers' });
    const refused = await refusal(
      harness.topics.publishOne({ message: { topic: 'persistent://t/readers/source', payload: text('x') } }),
    );
    expect([refused.code, refused.reason]).toEqual(['FAILED_PRECONDITION', 'READONLY_TOPIC']);
    expect(refused.details['writer_topic']).toBe('persistent://t/writers/source');
  });
});
