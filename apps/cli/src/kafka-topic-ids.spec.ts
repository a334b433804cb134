import { RawKafkaClient, type RawAnswer } from '@ledgerline/kafka-gateway/testing';
import { ApiKey, decodeRecordBatches, KafkaErrorCode, type Message } from '@ledgerline/kafka-protocol';
import { KAFKA_WAIT_MS } from './testing/kafka-clients.js';
import { kafkaStandaloneRun } from './testing/kafka-standalone-run.js';

// Metadata v9-v12 against standalone's gateway: topic ids (KIP-516) stable for a topic's life, new for a topic
// deleted and created again, and topics found by id (v12), as librdkafka 2.x asks for them (its test 0107); and
// Fetch by topic id (v13+), as librdkafka 2.x fetches once the gateway advertises it.

const NO_ID = Buffer.alloc(16);

interface TopicAnswer {
  errorCode: number;
  name: string | null;
  topicId: Buffer;
  partitions: unknown[];
}

function answered(answer: RawAnswer | undefined): Message {
  if (answer === undefined || answer === 'closed') throw new Error('the gateway closed the connection');
  return answer;
}

describe('Kafka topic ids (Metadata v9-v12) against standalone', () => {
  const run = kafkaStandaloneRun('kafka-topic-ids');
  let raw: RawKafkaClient;

  beforeAll(async () => {
    raw = await RawKafkaClient.open(run.standalone.kafka!.port);
  });
  afterAll(() => raw?.end());

  async function metadata(version: number, topics: { name: string | null; topicId?: Buffer }[], create = false) {
    const body = answered(
      await raw.request(ApiKey.Metadata, version, {
        topics: topics.map((topic) => ({ topicId: topic.topicId ?? NO_ID, name: topic.name })),
        allowAutoTopicCreation: create,
        includeTopicAuthorizedOperations: false,
      }),
    );
    return body['topics'] as TopicAnswer[];
  }

  async function createTopic(name: string, partitions: number): Promise<void> {
    const body = answered(
      await raw.request(ApiKey.CreateTopics, 4, {
        topics: [{ name, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: [] }],
        timeoutMs: KAFKA_WAIT_MS,
      }),
    );
    expect(body['topics']).toEqual([expect.objectContaining({ name, errorCode: KafkaErrorCode.NONE })]);
  }

  async function deleteTopic(name: string): Promise<void> {
    const body = answered(await raw.request(ApiKey.DeleteTopics, 3, { topicNames: [name], timeoutMs: 10_000 }));
    expect(body['responses']).toEqual([{ name, errorCode: KafkaErrorCode.NONE }]);
  }

  it('advertises Metadata v0-v12 and Fetch v4-v17 (topic ids from v13)', async () => {
    const body = answered(
      await raw.request(ApiKey.ApiVersions, 3, { clientSoftwareName: 'spec', clientSoftwareVersion: '1' }),
    );
    const keys = body['apiKeys'] as { apiKey: number; minVersion: number; maxVersion: number }[];
    expect(keys.find((key) => key.apiKey === ApiKey.Metadata)).toEqual({
      apiKey: ApiKey.Metadata,
      minVersion: 0,
      maxVersion: 12,
    });
    expect(keys.find((key) => key.apiKey === ApiKey.Fetch)).toEqual({
      apiKey: ApiKey.Fetch,
      minVersion: 4,
      maxVersion: 17,
    });
  });

  it('answers one id for a topic on every call and version from v10, and none before', async () => {
    await createTopic('ids-stable', 3);
    const [first] = await metadata(12, [{ name: 'ids-stable' }]);
    expect(first).toMatchObject({ errorCode: KafkaErrorCode.NONE, name: 'ids-stable' });
    expect(first!.topicId).not.toEqual(NO_ID);
    expect(first!.partitions).toHaveLength(3);
    for (const version of [10, 11, 12]) {
      const [again] = await metadata(version, [{ name: 'ids-stable' }]);
      expect(again!.topicId).toEqual(first!.topicId);
    }
    const [v9] = await metadata(9, [{ name: 'ids-stable' }]);
    expect(v9).toMatchObject({ errorCode: KafkaErrorCode.NONE, topicId: NO_ID });
    // Every topic listed (a null topic list) carries its id too.
    const listed = answered(await raw.request(ApiKey.Metadata, 12, { topics: null, allowAutoTopicCreation: false }));
    expect((listed['topics'] as TopicAnswer[]).find((topic) => topic.name === 'ids-stable')!.topicId).toEqual(
      first!.topicId,
    );
  });

  it('keeps the id of a topic auto-created by Metadata, and of a non-partitioned topic its owner has written to', async () => {
    const [created] = await metadata(12, [{ name: 'ids-auto' }], true);
    expect(created).toMatchObject({ errorCode: KafkaErrorCode.NONE, name: 'ids-auto' });
    expect(created!.topicId).not.toEqual(NO_ID);
    // A non-partitioned topic the SDK made and wrote to: its owner rewrote its ManagedLedgerInfo meanwhile.
    const producer = await run.client.producer({ topic: 'public/default/ids-plain' });
    await producer.send('one');
    const [plain] = await metadata(12, [{ name: 'ids-plain' }]);
    expect(plain).toMatchObject({ errorCode: KafkaErrorCode.NONE, partitions: [expect.anything()] });
    await producer.send('two');
    await producer.close();
    const [byId] = await metadata(12, [{ name: null, topicId: plain!.topicId }]);
    expect(byId).toMatchObject({ errorCode: KafkaErrorCode.NONE, name: 'ids-plain', topicId: plain!.topicId });
    const [auto] = await metadata(12, [{ name: 'ids-auto' }]);
    expect(auto!.topicId).toEqual(created!.topicId);
  });

  it('finds a topic by id (v12) and answers UNKNOWN_TOPIC_ID with a null name for an id no topic has', async () => {
    await createTopic('ids-lookup', 2);
    const [byName] = await metadata(12, [{ name: 'ids-lookup' }]);
    const unknown = Buffer.from('00112233445566778899aabbccddeeff', 'hex');
    const [byId, missing] = await metadata(12, [
      { name: null, topicId: byName!.topicId },
      { name: null, topicId: unknown },
    ]);
    expect(byId).toMatchObject({ errorCode: KafkaErrorCode.NONE, name: 'ids-lookup', topicId: byName!.topicId });
    expect(byId!.partitions).toHaveLength(2);
    expect(missing).toEqual(
      expect.objectContaining({ errorCode: KafkaErrorCode.UNKNOWN_TOPIC_ID, name: null, topicId: unknown }),
    );
    // v10 and v11 carry the fields, but a topic without a name there is INVALID_REQUEST, as no Kafka broker serves it.
    const [v11] = await metadata(11, [{ name: null, topicId: byName!.topicId }]);
    expect(v11).toMatchObject({ errorCode: KafkaErrorCode.INVALID_REQUEST, name: '' });
  });

  it('gives a topic deleted and created again a new id; the old id is unknown from then on', async () => {
    await createTopic('ids-recreated', 2);
    const [before] = await metadata(12, [{ name: 'ids-recreated' }]);
    await deleteTopic('ids-recreated');
    const [gone] = await metadata(12, [{ name: null, topicId: before!.topicId }]);
    expect(gone).toMatchObject({ errorCode: KafkaErrorCode.UNKNOWN_TOPIC_ID, name: null });
    await createTopic('ids-recreated', 2);
    const [after] = await metadata(12, [{ name: 'ids-recreated' }]);
    expect(after).toMatchObject({ errorCode: KafkaErrorCode.NONE, name: 'ids-recreated' });
    expect(after!.topicId).not.toEqual(NO_ID);
    expect(after!.topicId).not.toEqual(before!.topicId);
    const [old, current] = await metadata(12, [
      { name: null, topicId: before!.topicId },
      { name: null, topicId: after!.topicId },
    ]);
    expect(old).toMatchObject({ errorCode: KafkaErrorCode.UNKNOWN_TOPIC_ID });
    expect(current).toMatchObject({ errorCode: KafkaErrorCode.NONE, name: 'ids-recreated' });
  });

  /** A Fetch of partition 0 of each topic, by id (v13+) or by name (before), from offset 0, without waiting. */
  async function fetch(version: number, topics: { name?: string; topicId?: Buffer }[]) {
    const body = answered(
      await raw.request(ApiKey.Fetch, version, {
        maxWaitMs: 0,
        minBytes: 1,
        maxBytes: 1 << 20,
        isolationLevel: 0,
        sessionId: 0,
        sessionEpoch: -1,
        topics: topics.map((topic) => ({
          name: topic.name ?? '',
          topicId: topic.topicId ?? NO_ID,
          partitions: [{ partitionIndex: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }],
        })),
        forgotten: [],
        rackId: '',
      }),
    );
    return (body['responses'] as { topic: string; topicId: Buffer; partitions: Message[] }[]).map((topic) => ({
      ...topic,
      errorCode: topic.partitions[0]!['errorCode'],
      values: decodeRecordBatches(topic.partitions[0]!['records'] as Buffer).flatMap((batch) =>
        batch.records.map((record) => record.value?.toString()),
      ),
    }));
  }

  it.each([13, 16, 17])(
    'fetches by topic id in v%d what the SDK published, and answers UNKNOWN_TOPIC_ID for an id no topic has',
    async (version) => {
      const name = `ids-fetch-${version}`;
      const producer = await run.client.producer({ topic: `public/default/${name}` });
      await producer.send('first');
      await producer.send('second');
      await producer.close();
      const [topic] = await metadata(12, [{ name }]);
      const unknown = Buffer.from('ffeeddccbbaa99887766554433221100', 'hex');
      const [byId, missing] = await fetch(version, [{ topicId: topic!.topicId }, { topicId: unknown }]);
      expect(byId).toMatchObject({ topicId: topic!.topicId, errorCode: KafkaErrorCode.NONE });
      expect(byId!.values).toEqual(['first', 'second']);
      expect(missing).toMatchObject({ topicId: unknown, errorCode: KafkaErrorCode.UNKNOWN_TOPIC_ID, values: [] });
      // By name, flexible (v12) and not (v11), as before.
      for (const byName of [12, 11]) {
        const [named] = await fetch(byName, [{ name }]);
        expect(named).toMatchObject({ topic: name, errorCode: KafkaErrorCode.NONE, values: ['first', 'second'] });
      }
    },
  );

  it('fetches by id a topic deleted and created again only by its new id', async () => {
    await createTopic('ids-fetch-recreated', 1);
    const [before] = await metadata(12, [{ name: 'ids-fetch-recreated' }]);
    await deleteTopic('ids-fetch-recreated');
    await createTopic('ids-fetch-recreated', 1);
    const [after] = await metadata(12, [{ name: 'ids-fetch-recreated' }]);
    const [old, current] = await fetch(13, [{ topicId: before!.topicId }, { topicId: after!.topicId }]);
    expect(old).toMatchObject({ errorCode: KafkaErrorCode.UNKNOWN_TOPIC_ID });
    expect(current).toMatchObject({ topicId: after!.topicId, errorCode: KafkaErrorCode.NONE, values: [] });
  });
});
