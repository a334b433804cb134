import { create } from '@bufbuild/protobuf';
import { testBackends, type TestBackends } from '@ledgerline/managed-ledger/testing';
import { ListProducersRequestSchema } from '@ledgerline/proto';
import type { DedupSettings } from './deduplication.js';
import type { OwnedTopic } from './owned-topic.js';
import { listProducers, MAX_LISTED_PRODUCERS } from './producer-list.js';
import { openTestTopic } from './testing/test-topic.js';

const TOPIC = 'persistent://t/ns/producer-list';
const HOUR_MS = 3_600_000;
const SETTINGS: DedupSettings = {
  maxProducers: 2_000,
  producerInactivityMs: 6 * HOUR_MS,
  snapshotIntervalEntries: 1_000,
  snapshotIntervalMs: 120_000,
};

function publish(topic: OwnedTopic, producerName: string, sequenceId: bigint) {
  return topic.publish({
    topic: TOPIC,
    producerName,
    sequenceId,
    payload: new TextEncoder().encode(`${producerName}-${sequenceId}`),
  } as never);
}

/** The listing as the wire answers it (init shapes leave the fields optional). */
function list(topic: OwnedTopic, namePrefix: string, maxProducers = 0) {
  const answer = listProducers(
    topic.dedup,
    create(ListProducersRequestSchema, { topic: TOPIC, namePrefix, maxProducers }),
  );
  return { producers: answer.producers ?? [], omitted: answer.omitted ?? 0 };
}

describe('ListProducers: the producers a topic deduplicates against', () => {
  let backends: TestBackends;
  let topic: OwnedTopic;
  beforeEach(async () => {
    backends = testBackends();
    topic = await openTestTopic(TOPIC, backends, SETTINGS);
  });
  afterEach(async () => topic.unload('test finished'));

  it('lists those with the prefix, their last stored sequence id and time; after a reload the mark without its time', async () => {
    await publish(topic, 'kafka-7-0', 0n);
    const last = await publish(topic, 'kafka-7-0', 1n);
    await publish(topic, 'sdk-producer', 5n);
    const expected = { name: 'kafka-7-0', lastSequenceId: 1n, lastPublishTimeMs: BigInt(last.publishTimeMs) };
    expect(list(topic, 'kafka-')).toEqual({ producers: [expected], omitted: 0 });
    expect(list(topic, '').producers.map((producer) => producer.name)).toEqual(['kafka-7-0', 'sdk-producer']);

    // A new owner recovers the marks from the snapshot the unload took, which keeps no time: 0, unknown.
    await topic.unload('reload');
    topic = await openTestTopic(TOPIC, backends, SETTINGS);
    expect(list(topic, 'kafka-')).toEqual({ producers: [{ ...expected, lastPublishTimeMs: 0n }], omitted: 0 });
    // Its next entry gives it one again.
    const next = await publish(topic, 'kafka-7-0', 2n);
    expect(list(topic, 'kafka-').producers).toEqual([
      { name: 'kafka-7-0', lastSequenceId: 2n, lastPublishTimeMs: BigInt(next.publishTimeMs) },
    ]);
  });

  it('keeps the most recently active within the bound, says how many it left out, and leaves out silent ones', async () => {
    for (const producer of ['kafka-1-0', 'kafka-2-0', 'kafka-3-0']) await publish(topic, producer, 0n);
    expect(list(topic, 'kafka-', 2)).toEqual({
      producers: [expect.objectContaining({ name: 'kafka-2-0' }), expect.objectContaining({ name: 'kafka-3-0' })],
      omitted: 1,
    });
    backends.clock.advance(6 * HOUR_MS + 1);
    await publish(topic, 'kafka-3-0', 1n);
    expect(list(topic, 'kafka-').producers.map((producer) => producer.name)).toEqual(['kafka-3-0']);
  });

  it('answers at most MAX_LISTED_PRODUCERS whatever is asked', async () => {
    for (let index = 0; index <= MAX_LISTED_PRODUCERS; index++) await publish(topic, `kafka-${index}-0`, 0n);
    const answer = list(topic, 'kafka-', MAX_LISTED_PRODUCERS + 5);
    expect(answer.producers).toHaveLength(MAX_LISTED_PRODUCERS);
    expect(answer.omitted).toBe(1);
    expect(answer.producers[0]!.name).toBe('kafka-1-0');
  });
});
