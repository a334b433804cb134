import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { RawKafkaClient, type RawAnswer } from '@ledgerline/kafka-gateway/testing';
import { ApiKey, KafkaErrorCode, type Message } from '@ledgerline/kafka-protocol';
import type { Admin, Kafka } from 'kafkajs';
import { consumeMessages, failureOf, kafkaAdminPerSuite } from './testing/kafka-clients.js';
import { kafkaStandaloneRun } from './testing/kafka-standalone-run.js';

// Kafka's admin and offset APIs where clients found us apart from Kafka (issue
// 42): kafkajs 2.2.4 in process against standalone's gateway, raw requests for
// what no client sends on its own (oversized metadata, pipelined commits of
// one partition), and kafka-python for a second client's reading. Every bad
// request is answered with Kafka's own error code and leaves nothing stored.

const PYTHON = '/usr/bin/python3';
const PYTHON_CLIENT = join(__dirname, 'testing', 'kafka-python-client.py');
const PYTHON_TIMEOUT_MS = 60_000;
/** Kafka's offset.metadata.max.bytes default, the gateway's kafkaOffsetMetadataMaxLength. */
const MAX_METADATA_LENGTH = 4096;

function python(args: readonly string[]): Promise<Record<string, unknown>[]> {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, [PYTHON_CLIENT, ...args], { timeout: PYTHON_TIMEOUT_MS }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`kafka-python ${args.join(' ')} failed: ${error.message}\n${stderr}`));
      else
        resolve(
          stdout
            .split('\n')
            .filter((line) => line !== '')
            .map((line) => JSON.parse(line) as Record<string, unknown>),
        );
    });
  });
}

/** The decoded answer, failing the test when the gateway closed the connection instead. */
function answered(answer: RawAnswer | undefined): Message {
  if (answer === undefined || answer === 'closed') throw new Error('the gateway closed the connection');
  return answer;
}

/** The Kafka error types a kafkajs call failed with ('succeeded' when it did not): one per topic refused. */
async function kafkaErrorTypes(work: () => Promise<unknown>): Promise<string[]> {
  const failure = (await failureOf(work)) as 'succeeded' | { type?: string; errors?: { type?: string }[] };
  if (failure === 'succeeded') return [failure];
  if (Array.isArray(failure.errors)) return failure.errors.map((error) => error.type ?? String(error));
  return [failure.type ?? String(failure)];
}

type Commit = { partitionIndex: number; committedOffset: bigint; committedMetadata: string | null };

/** An OffsetCommit v2 body of a commit outside any generation (a simple commit, as an admin or kcat makes). */
function offsetCommit(groupId: string, topic: string, partitions: Commit[]): Message {
  return {
    groupId,
    generationId: -1,
    memberId: '',
    retentionTimeMs: -1n,
    topics: [{ name: topic, partitions }],
  };
}

describe('Kafka admin and offset APIs against standalone', () => {
  const run = kafkaStandaloneRun('kafka-admin');
  let kafka: Kafka;
  let admin: Admin;
  let raw: RawKafkaClient;
  kafkaAdminPerSuite(run, (clients) => ({ kafka, admin, raw } = clients));

  /** What OffsetFetch v3 answers for the group on the topic's partitions: [offset, metadata] each. */
  async function fetched(groupId: string, topic: string, partitions: number[]): Promise<[bigint, string | null][]> {
    const answer = answered(
      await raw.request(ApiKey.OffsetFetch, 3, { groupId, topics: [{ name: topic, partitionIndexes: partitions }] }),
    );
    const [only] = answer['topics'] as { partitions: { committedOffset: bigint; metadata: string | null }[] }[];
    return only!.partitions.map((partition) => [partition.committedOffset, partition.metadata]);
  }

  describe('offset commit metadata', () => {
    it("keeps a commit's metadata beside its offset and answers it in OffsetFetch (kafkajs both ways)", async () => {
      await admin.createTopics({ topics: [{ topic: 'checkpointed', numPartitions: 1 }] });
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({ topic: 'checkpointed', messages: [{ value: 'a' }, { value: 'b' }] });
      await producer.disconnect();
      const consumer = kafka.consumer({ groupId: 'checkpointers', sessionTimeout: 10_000 });
      await consumer.connect();
      await consumer.subscribe({ topic: 'checkpointed', fromBeginning: true });
      await consumeMessages(consumer, 2, { autoCommit: false });
      await consumer.commitOffsets([{ topic: 'checkpointed', partition: 0, offset: '1', metadata: 'first' }]);
      await consumer.commitOffsets([{ topic: 'checkpointed', partition: 0, offset: '2', metadata: 'batch 7 ✓' }]);
      await consumer.disconnect();
      expect(await admin.fetchOffsets({ groupId: 'checkpointers', topics: ['checkpointed'] })).toEqual([
        { topic: 'checkpointed', partitions: [{ partition: 0, offset: '2', metadata: 'batch 7 ✓' }] },
      ]);
      // A commit without metadata keeps none, as Kafka keeps "" for null.
      expect(
        answered(
          await raw.request(
            ApiKey.OffsetCommit,
            2,
            offsetCommit('checkpointers', 'checkpointed', [
              { partitionIndex: 0, committedOffset: 1n, committedMetadata: null },
            ]),
          ),
        ),
      ).toMatchObject({ topics: [{ partitions: [{ errorCode: KafkaErrorCode.NONE }] }] });
      expect(await fetched('checkpointers', 'checkpointed', [0])).toEqual([[1n, '']]);
    });

    it('refuses metadata past offset.metadata.max.bytes with OFFSET_METADATA_TOO_LARGE, storing nothing of it', async () => {
      await admin.createTopics({ topics: [{ topic: 'bounded-metadata', numPartitions: 2 }] });
      const commit = (metadata: [string, string]) =>
        raw.request(
          ApiKey.OffsetCommit,
          2,
          offsetCommit('bounded', 'bounded-metadata', [
            { partitionIndex: 0, committedOffset: 0n, committedMetadata: metadata[0] },
            { partitionIndex: 1, committedOffset: 0n, committedMetadata: metadata[1] },
          ]),
        );
      const longest = 'm'.repeat(MAX_METADATA_LENGTH);
      // The partition whose metadata is too long is refused; the other in the same request is stored.
      expect(answered(await commit([`${longest}m`, longest]))).toMatchObject({
        topics: [
          {
            partitions: [
              { partitionIndex: 0, errorCode: KafkaErrorCode.OFFSET_METADATA_TOO_LARGE },
              { partitionIndex: 1, errorCode: KafkaErrorCode.NONE },
            ],
          },
        ],
      });
      expect(await fetched('bounded', 'bounded-metadata', [0, 1])).toEqual([
        [-1n, ''],
        [0n, longest],
      ]);
      // Nothing of the refused commit reached storage: the group has no subscription on partition 0.
      const [first] = await run.client.topicStats('public/default/bounded-metadata');
      expect(first!.stats.subscriptions.map((subscription) => subscription.name)).toEqual([]);
      // A refused commit leaves an earlier one as it was.
      expect(answered(await commit(['kept', 'kept']))).toMatchObject({
        topics: [{ partitions: [{ errorCode: KafkaErrorCode.NONE }, { errorCode: KafkaErrorCode.NONE }] }],
      });
      await commit([`${longest}m`, `${longest}m`]);
      expect(await fetched('bounded', 'bounded-metadata', [0, 1])).toEqual([
        [0n, 'kept'],
        [0n, 'kept'],
      ]);
    });

    it('round-trips metadata through kafka-python: committed(tp, metadata=True) reads what commit() stored', async () => {
      await admin.createTopics({ topics: [{ topic: 'python-metadata', numPartitions: 1 }] });
      expect(
        await python(['commit-metadata', run.broker, 'python-metadata', 'pythonistas', '0', 'from python']),
      ).toEqual([{ offset: 0, metadata: 'from python' }]);
      expect(await fetched('pythonistas', 'python-metadata', [0])).toEqual([[0n, 'from python']]);
    });
  });

  describe('concurrent commits of one partition', () => {
    it('applies commits pipelined on one connection in order: every one answered NONE, the last one wins', async () => {
      await admin.createTopics({ topics: [{ topic: 'committed-often', numPartitions: 1 }] });
      const producer = kafka.producer();
      await producer.connect();
      // One message per entry: a subscription's position is an entry, so its backlog moves by whole entries.
      for (let index = 0; index < 10; index++)
        await producer.send({ topic: 'committed-often', messages: [{ value: `m${index}` }] });
      await producer.disconnect();
      const commitAt = (offset: number) => ({
        apiKey: ApiKey.OffsetCommit,
        version: 2,
        body: offsetCommit('pipelined', 'committed-often', [
          { partitionIndex: 0, committedOffset: BigInt(offset), committedMetadata: `at ${offset}` },
        ]),
      });
      // The first commit creates the group's cursor; each later one moves it, checked against the one before.
      expect(answered(await raw.request(ApiKey.OffsetCommit, 2, commitAt(1).body))).toMatchObject({
        topics: [{ partitions: [{ errorCode: KafkaErrorCode.NONE }] }],
      });
      const answers = await raw.pipeline([6, 2, 9, 4].map(commitAt));
      expect(
        answers.map(
          (answer) =>
            (answered(answer)['topics'] as { partitions: { errorCode: number }[] }[])[0]!.partitions[0]!.errorCode,
        ),
      ).toEqual([KafkaErrorCode.NONE, KafkaErrorCode.NONE, KafkaErrorCode.NONE, KafkaErrorCode.NONE]);
      expect(await admin.fetchOffsets({ groupId: 'pipelined', topics: ['committed-often'] })).toEqual([
        { topic: 'committed-often', partitions: [{ partition: 0, offset: '4', metadata: 'at 4' }] },
      ]);
      const [partition] = await run.client.topicStats('public/default/committed-often');
      expect(
        partition!.stats.subscriptions.find((subscription) => subscription.name === 'pipelined')?.backlogMessages,
      ).toBe(6n);
    });
  });

  describe('CreateTopics configs and assignments', () => {
    it('answers an unknown config with INVALID_CONFIG and creates nothing; known ones are accepted (kafkajs)', async () => {
      expect(
        await kafkaErrorTypes(() =>
          admin.createTopics({
            topics: [
              { topic: 'misconfigured', numPartitions: 1, configEntries: [{ name: 'retention.mss', value: '1' }] },
            ],
          }),
        ),
      ).toEqual(['INVALID_CONFIG']);
      expect(
        await kafkaErrorTypes(() =>
          admin.createTopics({
            topics: [
              { topic: 'misconfigured', numPartitions: 1, configEntries: [{ name: 'retention.ms', value: 'soon' }] },
            ],
          }),
        ),
      ).toEqual(['INVALID_CONFIG']);
      expect(await admin.listTopics()).not.toContain('misconfigured');
      const configured = await admin.createTopics({
        topics: [
          {
            topic: 'configured',
            numPartitions: 1,
            configEntries: [
              { name: 'retention.ms', value: '604800000' },
              { name: 'cleanup.policy', value: 'delete' },
            ],
          },
        ],
      });
      expect(configured).toBe(true);
    });

    it("creates a topic from replica assignments of the gateways, and refuses bad ones with Kafka's codes (kafkajs)", async () => {
      // Standalone's gateway is broker 1.
      const replicaAssignment = [
        { partition: 1, replicas: [1] },
        { partition: 0, replicas: [1] },
      ];
      expect(await admin.createTopics({ topics: [{ topic: 'assigned', replicaAssignment }] })).toBe(true);
      const [assigned] = (await admin.fetchTopicMetadata({ topics: ['assigned'] })).topics;
      expect(assigned!.partitions.map((partition) => partition.partitionId).sort()).toEqual([0, 1]);
      const refused = (topic: string, extra: object) =>
        kafkaErrorTypes(() => admin.createTopics({ topics: [{ topic, ...extra }] }));
      expect(await refused('unassignable', { replicaAssignment: [{ partition: 0, replicas: [7] }] })).toEqual([
        'INVALID_REPLICA_ASSIGNMENT',
      ]);
      expect(await refused('unassignable', { replicaAssignment: [{ partition: 1, replicas: [1] }] })).toEqual([
        'INVALID_REPLICA_ASSIGNMENT',
      ]);
      expect(
        await refused('unassignable', { numPartitions: 1, replicaAssignment: [{ partition: 0, replicas: [1] }] }),
      ).toEqual(['INVALID_PARTITIONS']);
      expect(await admin.listTopics()).not.toContain('unassignable');
    });

    it('refuses an unknown config through kafka-python too', async () => {
      expect(await python(['create-topic', run.broker, 'python-misconfigured', '1', 'no.such.config=1'])).toEqual([
        { error: 'InvalidConfigurationError' },
      ]);
      expect(await python(['create-topic', run.broker, 'python-configured', '1', 'retention.ms=1000'])).toEqual([
        { error: null },
      ]);
      expect(await admin.listTopics()).toEqual(expect.arrayContaining(['python-configured']));
      expect(await admin.listTopics()).not.toContain('python-misconfigured');
    });
  });

  describe('CreatePartitions', () => {
    const partitionIds = async (topic: string): Promise<number[]> => {
      const [found] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
      return found!.partitions.map((partition) => partition.partitionId).sort((a, b) => a - b);
    };

    it('is advertised by ApiVersions in versions 0 to 3', async () => {
      const answer = answered(await raw.request(ApiKey.ApiVersions, 0, {}));
      expect(answer['apiKeys']).toContainEqual({ apiKey: ApiKey.CreatePartitions, minVersion: 0, maxVersion: 3 });
    });

    it('grows a topic: new partitions serve produce and fetch, the existing ones keep their messages (kafkajs)', async () => {
      await admin.createTopics({ topics: [{ topic: 'growing', numPartitions: 2 }] });
      const before = kafka.producer();
      await before.connect();
      await before.send({
        topic: 'growing',
        messages: [
          { value: 'p0', partition: 0 },
          { value: 'p1', partition: 1 },
        ],
      });
      await before.disconnect();
      await admin.createPartitions({ topicPartitions: [{ topic: 'growing', count: 4 }] });
      expect(await partitionIds('growing')).toEqual([0, 1, 2, 3]);
      // A producer started after the growth knows the new partitions from its first Metadata.
      const after = kafka.producer();
      await after.connect();
      const [stored] = await after.send({ topic: 'growing', messages: [{ value: 'p3', partition: 3 }] });
      expect(stored).toMatchObject({ partition: 3, baseOffset: '0' });
      await after.disconnect();
      expect((await run.client.topicStats('public/default/growing')).length).toBe(4);
      const consumer = kafka.consumer({ groupId: 'growers', sessionTimeout: 10_000 });
      await consumer.connect();
      await consumer.subscribe({ topic: 'growing', fromBeginning: true });
      const read = await consumeMessages(consumer, 3);
      await consumer.disconnect();
      expect(
        read.map(({ partition, message }) => [partition, message.offset, message.value!.toString()]).sort(),
      ).toEqual([
        [0, '0', 'p0'],
        [1, '0', 'p1'],
        [3, '0', 'p3'],
      ]);
    });

    it("checks without growing under validate_only, and refuses shrinking, no growth and unknown topics with Kafka's codes", async () => {
      await admin.createTopics({ topics: [{ topic: 'fixed', numPartitions: 3 }] });
      await admin.createPartitions({ validateOnly: true, topicPartitions: [{ topic: 'fixed', count: 6 }] });
      expect(await partitionIds('fixed')).toEqual([0, 1, 2]);
      const grow = (topic: string, count: number) =>
        kafkaErrorTypes(() => admin.createPartitions({ topicPartitions: [{ topic, count }] }));
      expect(await grow('fixed', 2)).toEqual(['INVALID_PARTITIONS']);
      expect(await grow('fixed', 3)).toEqual(['INVALID_PARTITIONS']);
      expect(await grow('nowhere', 5)).toEqual(['UNKNOWN_TOPIC_OR_PARTITION']);
      expect(
        await kafkaErrorTypes(() =>
          admin.createPartitions({ topicPartitions: [{ topic: 'fixed', count: 5, assignments: [[1]] }] }),
        ),
      ).toEqual(['INVALID_REPLICA_ASSIGNMENT']);
      expect(
        await kafkaErrorTypes(() =>
          admin.createPartitions({ topicPartitions: [{ topic: 'fixed', count: 5, assignments: [[1], [4]] }] }),
        ),
      ).toEqual(['INVALID_REPLICA_ASSIGNMENT']);
      expect(await partitionIds('fixed')).toEqual([0, 1, 2]);
      expect((await run.client.topicStats('public/default/fixed')).length).toBe(3);
      // Assignments naming the one gateway, one per new partition, are taken.
      await admin.createPartitions({ topicPartitions: [{ topic: 'fixed', count: 5, assignments: [[1], [1]] }] });
      expect(await partitionIds('fixed')).toEqual([0, 1, 2, 3, 4]);
    });

    it('grows in a flexible version (v3) as librdkafka and the Java client send it', async () => {
      await admin.createTopics({ topics: [{ topic: 'flexible', numPartitions: 1 }] });
      const answer = answered(
        await raw.request(ApiKey.CreatePartitions, 3, {
          topics: [{ name: 'flexible', count: 2, assignments: null }],
          timeoutMs: 5000,
          validateOnly: false,
        }),
      );
      expect(answer['results']).toEqual([{ name: 'flexible', errorCode: KafkaErrorCode.NONE, errorMessage: null }]);
      expect(await partitionIds('flexible')).toEqual([0, 1]);
    });

    it('grows a topic through kafka-python, and refuses shrinking it', async () => {
      await admin.createTopics({ topics: [{ topic: 'python-growing', numPartitions: 1 }] });
      expect(await python(['create-partitions', run.broker, 'python-growing', '3'])).toEqual([{ error: null }]);
      expect(await python(['create-partitions', run.broker, 'python-growing', '2'])).toEqual([
        { error: 'InvalidPartitionsError' },
      ]);
      expect(await partitionIds('python-growing')).toEqual([0, 1, 2]);
    });
  });
});
