import { RawKafkaClient, type RawAnswer } from '@ledgerline/kafka-gateway/testing';
import { ApiKey, KafkaErrorCode, type Message } from '@ledgerline/kafka-protocol';
import { ConfigResourceTypes, type Admin, type Consumer, type Kafka } from 'kafkajs';
import { failureOf, KAFKA_WAIT_MS, kafkaAdminPerSuite } from './testing/kafka-clients.js';
import { kafkaStandaloneRun } from './testing/kafka-standalone-run.js';

// The Kafka admin APIs applications call beyond topics: DeleteGroups, OffsetDelete, DescribeCluster, AlterConfigs,
// IncrementalAlterConfigs and DeleteRecords, against standalone's gateway, through kafkajs 2.2.4 where it sends them and raw
// requests (the versions librdkafka and the Java client send) where it does not. Every refusal is Kafka's code.

const { SET, DELETE, APPEND, SUBTRACT } = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 };

/** The decoded answer, failing the test when the gateway closed the connection instead. */
function answered(answer: RawAnswer | undefined): Message {
  if (answer === undefined || answer === 'closed') throw new Error('the gateway closed the connection');
  return answer;
}

/** The Kafka error types a kafkajs call failed with ('succeeded' when it did not). */
async function kafkaErrorTypes(work: () => Promise<unknown>): Promise<string[]> {
  const failure = (await failureOf(work)) as
    'succeeded' | { type?: string; errors?: { type?: string }[]; groups?: { error?: { type?: string } }[] };
  if (failure === 'succeeded') return [failure];
  if (Array.isArray(failure.groups)) return failure.groups.map((group) => group.error?.type ?? String(group));
  if (Array.isArray(failure.errors)) return failure.errors.map((error) => error.type ?? String(error));
  return [failure.type ?? String(failure)];
}

describe('Kafka group, cluster and config admin APIs against standalone', () => {
  const run = kafkaStandaloneRun('kafka-admin-apis');
  let kafka: Kafka;
  let admin: Admin;
  let raw: RawKafkaClient;
  kafkaAdminPerSuite(run, (clients) => ({ kafka, admin, raw } = clients));

  /** Simple commits (outside any generation) of the group on the topic's partitions, at these offsets. */
  async function commit(groupId: string, topic: string, offsets: Record<number, bigint>): Promise<void> {
    const answer = answered(
      await raw.request(ApiKey.OffsetCommit, 2, {
        groupId,
        generationId: -1,
        memberId: '',
        retentionTimeMs: -1n,
        topics: [
          {
            name: topic,
            partitions: Object.entries(offsets).map(([partition, offset]) => ({
              partitionIndex: Number(partition),
              committedOffset: offset,
              committedMetadata: null,
            })),
          },
        ],
      }),
    );
    expect(answer).toMatchObject({ topics: [{ partitions: Object.keys(offsets).map(() => ({ errorCode: 0 })) }] });
  }

  /** The offsets the group committed on the topic's partitions (-1 where none), as OffsetFetch v3 answers them. */
  async function committed(groupId: string, topic: string, partitions: number[]): Promise<bigint[]> {
    const answer = answered(
      await raw.request(ApiKey.OffsetFetch, 3, { groupId, topics: [{ name: topic, partitionIndexes: partitions }] }),
    );
    const [only] = answer['topics'] as { partitions: { committedOffset: bigint }[] }[];
    return only!.partitions.map((partition) => partition.committedOffset);
  }

  /** The subscriptions of a topic's partitions, by partition. */
  async function subscriptions(topic: string): Promise<string[][]> {
    const partitions = await run.client.topicStats(`public/default/${topic}`);
    return partitions.map((partition) => partition.stats.subscriptions.map((subscription) => subscription.name).sort());
  }

  /** A kafkajs consumer of the group subscribed to the topic, once it has joined the group (bounded wait). */
  async function joinedConsumer(groupId: string, topic: string): Promise<Consumer> {
    const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${groupId} did not join`)), KAFKA_WAIT_MS);
      consumer.on(consumer.events.GROUP_JOIN, () => {
        clearTimeout(timer);
        resolve();
      });
      consumer.run({ autoCommit: false, eachMessage: async () => undefined }).catch((error: unknown) => {
        clearTimeout(timer);
        reject(error as Error);
      });
    });
    return consumer;
  }

  it('advertises exactly the versions served in ApiVersions', async () => {
    const answer = answered(await raw.request(ApiKey.ApiVersions, 0, {}));
    expect(answer['apiKeys']).toEqual(
      expect.arrayContaining([
        { apiKey: ApiKey.AlterConfigs, minVersion: 0, maxVersion: 2 },
        { apiKey: ApiKey.DeleteGroups, minVersion: 0, maxVersion: 2 },
        { apiKey: ApiKey.IncrementalAlterConfigs, minVersion: 0, maxVersion: 1 },
        { apiKey: ApiKey.OffsetDelete, minVersion: 0, maxVersion: 0 },
        { apiKey: ApiKey.DescribeCluster, minVersion: 0, maxVersion: 0 },
        { apiKey: ApiKey.DeleteRecords, minVersion: 0, maxVersion: 2 },
      ]),
    );
  });

  describe('DescribeCluster', () => {
    it('answers the brokers, controller and cluster id Metadata answers (kafkajs describeCluster reads Metadata)', async () => {
      const answer = answered(
        await raw.request(ApiKey.DescribeCluster, 0, { includeClusterAuthorizedOperations: false }),
      );
      const port = run.standalone.kafka!.port;
      expect(answer).toMatchObject({
        errorCode: KafkaErrorCode.NONE,
        errorMessage: null,
        clusterId: 'ledgerline',
        controllerId: 1,
        brokers: [{ brokerId: 1, port, rack: null }],
      });
      const described = await admin.describeCluster();
      expect(described.clusterId).toBe(answer['clusterId']);
      expect(described.controller).toBe(answer['controllerId']);
      expect(described.brokers.map(({ nodeId, host, port }) => ({ brokerId: nodeId, host, port }))).toEqual(
        (answer['brokers'] as Message[]).map(({ brokerId, host, port }) => ({ brokerId, host, port })),
      );
    });
  });

  describe('DeleteGroups', () => {
    it("deletes an empty group's commits on every partition, leaving other groups' (kafkajs)", async () => {
      await admin.createTopics({ topics: [{ topic: 'retiring', numPartitions: 2 }] });
      await commit('retired', 'retiring', { 0: 0n, 1: 0n });
      await commit('kept', 'retiring', { 1: 0n });
      expect(await subscriptions('retiring')).toEqual([['retired'], ['kept', 'retired']]);
      expect(await admin.deleteGroups(['retired'])).toEqual([
        expect.objectContaining({ groupId: 'retired', errorCode: KafkaErrorCode.NONE }),
      ]);
      expect(await committed('retired', 'retiring', [0, 1])).toEqual([-1n, -1n]);
      expect(await committed('kept', 'retiring', [1])).toEqual([0n]);
      expect(await subscriptions('retiring')).toEqual([[], ['kept']]);
      // Gone: a second deletion finds no group.
      expect(await kafkaErrorTypes(() => admin.deleteGroups(['retired']))).toEqual(['GROUP_ID_NOT_FOUND']);
    });

    it('answers GROUP_ID_NOT_FOUND for a group that never committed, and one answer for a group named twice', async () => {
      expect(await kafkaErrorTypes(() => admin.deleteGroups(['never-seen']))).toEqual(['GROUP_ID_NOT_FOUND']);
      await commit('twice', 'retiring', { 0: 0n });
      const answer = answered(await raw.request(ApiKey.DeleteGroups, 2, { groupsNames: ['twice', 'twice', ''] }));
      expect(answer['results']).toEqual([
        { groupId: 'twice', errorCode: KafkaErrorCode.NONE },
        { groupId: '', errorCode: KafkaErrorCode.GROUP_ID_NOT_FOUND },
      ]);
    });

    it('answers NON_EMPTY_GROUP while the group has members, and deletes it once they left', async () => {
      await admin.createTopics({ topics: [{ topic: 'busy-topic', numPartitions: 1 }] });
      await commit('busy', 'busy-topic', { 0: 0n });
      const consumer = await joinedConsumer('busy', 'busy-topic');
      try {
        expect(await kafkaErrorTypes(() => admin.deleteGroups(['busy']))).toEqual(['NON_EMPTY_GROUP']);
        expect(await committed('busy', 'busy-topic', [0])).toEqual([0n]);
      } finally {
        await consumer.disconnect();
      }
      expect(await admin.deleteGroups(['busy'])).toEqual([
        expect.objectContaining({ groupId: 'busy', errorCode: KafkaErrorCode.NONE }),
      ]);
      expect(await committed('busy', 'busy-topic', [0])).toEqual([-1n]);
    });
  });

  describe('OffsetDelete', () => {
    const offsetDelete = async (groupId: string, topics: { name: string; partitions: number[] }[]) =>
      answered(
        await raw.request(ApiKey.OffsetDelete, 0, {
          groupId,
          topics: topics.map(({ name, partitions }) => ({
            name,
            partitions: partitions.map((partitionIndex) => ({ partitionIndex })),
          })),
        }),
      );

    it("deletes an empty group's commits of the partitions asked for and keeps the others", async () => {
      await admin.createTopics({ topics: [{ topic: 'pruned', numPartitions: 3 }] });
      await commit('pruners', 'pruned', { 0: 0n, 1: 0n, 2: 0n });
      expect(await offsetDelete('pruners', [{ name: 'pruned', partitions: [0, 2, 7] }])).toEqual({
        errorCode: KafkaErrorCode.NONE,
        throttleTimeMs: 0,
        topics: [
          {
            name: 'pruned',
            partitions: [
              { partitionIndex: 0, errorCode: KafkaErrorCode.NONE },
              { partitionIndex: 2, errorCode: KafkaErrorCode.NONE },
              { partitionIndex: 7, errorCode: KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION },
            ],
          },
        ],
      });
      expect(await committed('pruners', 'pruned', [0, 1, 2])).toEqual([-1n, 0n, -1n]);
      // A partition without a commit is answered NONE while the group has commits elsewhere.
      expect(await offsetDelete('pruners', [{ name: 'pruned', partitions: [0] }])).toMatchObject({
        errorCode: KafkaErrorCode.NONE,
        topics: [{ partitions: [{ partitionIndex: 0, errorCode: KafkaErrorCode.NONE }] }],
      });
    });

    it('answers GROUP_ID_NOT_FOUND for a group without commits or members, and INVALID_GROUP_ID for an empty id', async () => {
      expect(await offsetDelete('nobody', [{ name: 'pruned', partitions: [0] }])).toEqual({
        errorCode: KafkaErrorCode.GROUP_ID_NOT_FOUND,
        throttleTimeMs: 0,
        topics: [],
      });
      expect(await offsetDelete('', [{ name: 'pruned', partitions: [0] }])).toMatchObject({
        errorCode: KafkaErrorCode.INVALID_GROUP_ID,
      });
    });

    it('keeps the commits of topics a live member subscribes to (GROUP_SUBSCRIBED_TO_TOPIC) and deletes the others', async () => {
      await admin.createTopics({
        topics: [
          { topic: 'subscribed', numPartitions: 1 },
          { topic: 'unsubscribed', numPartitions: 1 },
        ],
      });
      await commit('readers', 'subscribed', { 0: 0n });
      await commit('readers', 'unsubscribed', { 0: 0n });
      const consumer = await joinedConsumer('readers', 'subscribed');
      try {
        expect(
          await offsetDelete('readers', [
            { name: 'subscribed', partitions: [0] },
            { name: 'unsubscribed', partitions: [0] },
          ]),
        ).toMatchObject({
          errorCode: KafkaErrorCode.NONE,
          topics: [
            { name: 'subscribed', partitions: [{ errorCode: KafkaErrorCode.GROUP_SUBSCRIBED_TO_TOPIC }] },
            { name: 'unsubscribed', partitions: [{ errorCode: KafkaErrorCode.NONE }] },
          ],
        });
      } finally {
        await consumer.disconnect();
      }
      expect(await committed('readers', 'subscribed', [0])).toEqual([0n]);
      expect(await committed('readers', 'unsubscribed', [0])).toEqual([-1n]);
    });
  });

  describe('AlterConfigs and IncrementalAlterConfigs', () => {
    const TOPIC = ConfigResourceTypes.TOPIC;
    const alter = (name: string, configEntries: { name: string; value: string }[], validateOnly = false) =>
      kafkaErrorTypes(() => admin.alterConfigs({ validateOnly, resources: [{ type: TOPIC, name, configEntries }] }));

    const topicConfigs = async (topic: string): Promise<Record<string, string>> => {
      const described = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: TOPIC, name: topic }],
      });
      return Object.fromEntries(
        described.resources[0]!.configEntries.map((entry) => [entry.configName, entry.configValue]),
      );
    };

    /** IncrementalAlterConfigs in `version` of one topic's changes: [errorCode, errorMessage]. */
    const incremental = async (
      version: number,
      resourceName: string,
      configs: { name: string; configOperation: number; value: string | null }[],
      resourceType = 2,
    ): Promise<[number, string | null]> => {
      const answer = answered(
        await raw.request(ApiKey.IncrementalAlterConfigs, version, {
          resources: [{ resourceType, resourceName, configs }],
          validateOnly: false,
        }),
      );
      const [only] = answer['responses'] as { errorCode: number; errorMessage: string | null }[];
      return [only!.errorCode, only!.errorMessage];
    };

    beforeAll(async () => {
      await admin.createTopics({ topics: [{ topic: 'configurable', numPartitions: 1 }] });
    });

    it('accepts the values topics here have and configs with no effect here, and changes nothing (kafkajs)', async () => {
      const before = await topicConfigs('configurable');
      expect(before['retention.ms']).toBe('-1');
      expect(
        await alter('configurable', [
          { name: 'retention.ms', value: '-1' },
          { name: 'cleanup.policy', value: 'delete' },
          { name: 'segment.bytes', value: '1048576' },
          { name: 'message.format.version', value: '2.8' },
        ]),
      ).toEqual(['succeeded']);
      expect(await topicConfigs('configurable')).toEqual(before);
    });

    it('refuses values topics here cannot have with POLICY_VIOLATION, under validate_only too, naming what decides them', async () => {
      expect(await alter('configurable', [{ name: 'retention.ms', value: '1000' }])).toEqual(['POLICY_VIOLATION']);
      expect(await alter('configurable', [{ name: 'cleanup.policy', value: 'compact' }], true)).toEqual([
        'POLICY_VIOLATION',
      ]);
      const [code, message] = await incremental(1, 'configurable', [
        { name: 'cleanup.policy', configOperation: APPEND, value: 'compact' },
      ]);
      expect(code).toBe(KafkaErrorCode.POLICY_VIOLATION);
      expect(message).toMatch(/cleanup.policy is delete .* never compacted/);
      expect(
        await incremental(0, 'configurable', [{ name: 'cleanup.policy', configOperation: SUBTRACT, value: 'delete' }]),
      ).toEqual([KafkaErrorCode.POLICY_VIOLATION, expect.any(String)]);
    });

    it('answers INVALID_CONFIG for an unknown name or a value not of its type (kafkajs), as CreateTopics does', async () => {
      expect(await alter('configurable', [{ name: 'retention.mss', value: '1' }])).toEqual(['INVALID_CONFIG']);
      expect(await alter('configurable', [{ name: 'retention.ms', value: 'soon' }])).toEqual(['INVALID_CONFIG']);
      expect(
        await incremental(1, 'configurable', [{ name: 'retention.ms', configOperation: APPEND, value: '5' }]),
      ).toEqual([KafkaErrorCode.INVALID_CONFIG, 'Config value append is not allowed for config key: retention.ms']);
      expect(
        await incremental(1, 'configurable', [{ name: 'retention.ms', configOperation: SET, value: null }]),
      ).toEqual([KafkaErrorCode.INVALID_CONFIG, expect.any(String)]);
    });

    it('deletes (to the default the topic has), and refuses unknown operations and a config named twice', async () => {
      expect(
        await incremental(1, 'configurable', [
          { name: 'retention.ms', configOperation: DELETE, value: null },
          { name: 'cleanup.policy', configOperation: APPEND, value: 'delete' },
        ]),
      ).toEqual([KafkaErrorCode.NONE, null]);
      expect(await incremental(1, 'configurable', [{ name: 'retention.ms', configOperation: 9, value: '1' }])).toEqual([
        KafkaErrorCode.INVALID_REQUEST,
        expect.any(String),
      ]);
      expect(
        await incremental(1, 'configurable', [
          { name: 'retention.ms', configOperation: SET, value: '-1' },
          { name: 'retention.ms', configOperation: DELETE, value: null },
        ]),
      ).toEqual([KafkaErrorCode.INVALID_REQUEST, 'Error due to duplicate config keys: retention.ms']);
    });

    it('answers an unknown topic, a broker setting and an unknown resource type as Kafka does', async () => {
      expect(await alter('nowhere', [{ name: 'retention.ms', value: '-1' }])).toEqual(['UNKNOWN_TOPIC_OR_PARTITION']);
      expect(await incremental(1, '1', [{ name: 'num.partitions', configOperation: SET, value: '3' }], 4)).toEqual([
        KafkaErrorCode.INVALID_REQUEST,
        expect.stringContaining('Cannot update these configs dynamically'),
      ]);
      expect(await incremental(1, '', [{ name: 'num.partitions', configOperation: DELETE, value: null }], 4)).toEqual([
        KafkaErrorCode.NONE,
        null,
      ]);
      expect(await incremental(1, '7', [], 4)).toEqual([KafkaErrorCode.INVALID_REQUEST, expect.any(String)]);
      expect(await incremental(1, 'g', [], 32)).toEqual([KafkaErrorCode.INVALID_REQUEST, expect.any(String)]);
      // The connection answered every one of them and still serves.
      expect(answered(await raw.request(ApiKey.ApiVersions, 0, {}))['errorCode']).toBe(KafkaErrorCode.NONE);
    });
  });

  describe('DeleteRecords', () => {
    /** The error code of a raw Fetch v4 of partition 0 at `offset`. */
    const fetchError = async (topic: string, offset: bigint): Promise<number> => {
      const answer = answered(
        await raw.request(ApiKey.Fetch, 4, {
          replicaId: -1,
          maxWaitMs: 0,
          minBytes: 1,
          maxBytes: 1_000_000,
          isolationLevel: 0,
          topics: [
            { name: topic, partitions: [{ partitionIndex: 0, fetchOffset: offset, partitionMaxBytes: 1_000_000 }] },
          ],
        }),
      );
      const [only] = answer['responses'] as { partitions: { errorCode: number }[] }[];
      return only!.partitions[0]!.errorCode;
    };

    const offsetsOf = async (topic: string) =>
      (await admin.fetchTopicOffsets(topic)).map(({ low, high }) => ({ low, high }));

    it('deletes the records before an offset: the low watermark moves there and a fetch below it is OFFSET_OUT_OF_RANGE (kafkajs)', async () => {
      await admin.createTopics({ topics: [{ topic: 'shortened', numPartitions: 1 }] });
      const producer = kafka.producer();
      await producer.connect();
      for (let index = 0; index < 5; index++) {
        await producer.send({ topic: 'shortened', messages: [{ value: `m${index}` }] });
      }
      await producer.disconnect();
      expect(await fetchError('shortened', 1n)).toBe(KafkaErrorCode.NONE);
      // kafkajs finds the partition's leader in the metadata it holds, before it asks for any.
      await admin.fetchTopicMetadata({ topics: ['shortened'] });
      await admin.deleteTopicRecords({ topic: 'shortened', partitions: [{ partition: 0, offset: '3' }] });
      expect(await offsetsOf('shortened')).toEqual([{ low: '3', high: '5' }]);
      expect(await fetchError('shortened', 1n)).toBe(KafkaErrorCode.OFFSET_OUT_OF_RANGE);
      expect(await fetchError('shortened', 3n)).toBe(KafkaErrorCode.NONE);
      // An offset past the high watermark is refused and deletes nothing.
      const refused = (await failureOf(() =>
        admin.deleteTopicRecords({ topic: 'shortened', partitions: [{ partition: 0, offset: '9' }] }),
      )) as { cause?: { partitions?: { error?: { type?: string } }[] } };
      // kafkajs gives up at once (the error is not retriable), the partitions' errors as its cause.
      expect(refused.cause?.partitions?.map((partition) => partition.error?.type)).toEqual(['OFFSET_OUT_OF_RANGE']);
      expect(await offsetsOf('shortened')).toEqual([{ low: '3', high: '5' }]);
      // -1 deletes up to the high watermark.
      await admin.deleteTopicRecords({ topic: 'shortened', partitions: [{ partition: 0, offset: '-1' }] });
      expect(await offsetsOf('shortened')).toEqual([{ low: '5', high: '5' }]);
    });

    it('answers the low watermark in a flexible version (v2), and unknown partitions and bad offsets with their codes', async () => {
      await admin.createTopics({ topics: [{ topic: 'shortened-raw', numPartitions: 2 }] });
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({
        topic: 'shortened-raw',
        messages: [
          { value: 'a', partition: 1 },
          { value: 'b', partition: 1 },
        ],
      });
      await producer.disconnect();
      const answer = answered(
        await raw.request(ApiKey.DeleteRecords, 2, {
          topics: [
            {
              name: 'shortened-raw',
              partitions: [
                { partitionIndex: 1, offset: 1n },
                { partitionIndex: 0, offset: -2n },
                { partitionIndex: 5, offset: 0n },
              ],
            },
            { name: 'no-such-topic', partitions: [{ partitionIndex: 0, offset: 0n }] },
          ],
          timeoutMs: 5000,
        }),
      );
      expect(answer['topics']).toEqual([
        {
          name: 'shortened-raw',
          partitions: [
            { partitionIndex: 1, lowWatermark: 1n, errorCode: KafkaErrorCode.NONE },
            { partitionIndex: 0, lowWatermark: -1n, errorCode: KafkaErrorCode.OFFSET_OUT_OF_RANGE },
            { partitionIndex: 5, lowWatermark: -1n, errorCode: KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION },
          ],
        },
        {
          name: 'no-such-topic',
          partitions: [{ partitionIndex: 0, lowWatermark: -1n, errorCode: KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION }],
        },
      ]);
      expect(await offsetsOf('shortened-raw')).toEqual([
        { low: '0', high: '0' },
        { low: '1', high: '2' },
      ]);
    });
  });
});
