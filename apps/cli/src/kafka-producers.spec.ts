import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RawKafkaClient, recordBatchOf, type RawAnswer } from '@ledgerline/kafka-gateway/testing';
import { ApiKey, KafkaErrorCode, type Message } from '@ledgerline/kafka-protocol';
import type { Admin, Kafka } from 'kafkajs';
import { KAFKA_WAIT_MS, kafkaAdminPerSuite, openKafkaAdmin, type KafkaAdminClients } from './testing/kafka-clients.js';
import { kafkaStandaloneRun } from './testing/kafka-standalone-run.js';
import type { RunningStandalone } from './standalone.js';
import { startTestStandalone } from './testing/test-standalone.js';

// DescribeProducers (key 61) after idempotent producers (kafkajs and raw) produced, across an unload of the topic
// and a restart of standalone (a new owner recovers the deduplication state), and OffsetFetch for all topics of a
// group with no members.

type Producer = { producerId: bigint; producerEpoch: number; lastSequence: number; lastTimestamp: bigint };
type PartitionAnswer = { partitionIndex: number; errorCode: number; activeProducers: Producer[] };

/** The decoded answer, failing the test when the gateway closed the connection instead. */
function answered(answer: RawAnswer | undefined): Message {
  if (answer === undefined || answer === 'closed') throw new Error('the gateway closed the connection');
  return answer;
}

/** A raw idempotent Produce of `count` records from `sequence`, stored. */
async function produceRaw(
  raw: RawKafkaClient,
  topic: string,
  producerId: bigint,
  epoch: number,
  sequence: number,
  count: number,
) {
  const values = Array.from({ length: count }, (_, index) => `raw-${sequence + index}`);
  const records = recordBatchOf(values, { producerId, producerEpoch: epoch, baseSequence: sequence });
  const answer = answered(
    await raw.request(ApiKey.Produce, 7, {
      transactionalId: null,
      acks: -1,
      timeoutMs: KAFKA_WAIT_MS,
      topics: [{ name: topic, partitions: [{ partitionIndex: 0, records }] }],
    }),
  );
  expect(answer).toMatchObject({ responses: [{ partitions: [{ errorCode: KafkaErrorCode.NONE }] }] });
}

async function describe0(raw: RawKafkaClient, topic: string, partitions: number[]): Promise<PartitionAnswer[]> {
  const answer = answered(
    await raw.request(ApiKey.DescribeProducers, 0, { topics: [{ name: topic, partitionIndexes: partitions }] }),
  );
  const [only] = answer['topics'] as { name: string; partitions: PartitionAnswer[] }[];
  expect(only!.name).toBe(topic);
  return only!.partitions;
}

describe('DescribeProducers and OffsetFetch for all topics against standalone', () => {
  const run = kafkaStandaloneRun('kafka-producers');
  let kafka: Kafka;
  let admin: Admin;
  let raw: RawKafkaClient;
  kafkaAdminPerSuite(run, (clients) => ({ kafka, admin, raw } = clients));

  it('advertises DescribeProducers v0 in ApiVersions', async () => {
    const answer = answered(await raw.request(ApiKey.ApiVersions, 0, {}));
    expect(answer['apiKeys']).toEqual(
      expect.arrayContaining([{ apiKey: ApiKey.DescribeProducers, minVersion: 0, maxVersion: 0 }]),
    );
  });

  it("lists each idempotent producer's last sequence, not SDK producers nor plain Kafka ones, and again after an unload", async () => {
    await admin.createTopics({ topics: [{ topic: 'described', numPartitions: 1 }], waitForLeaders: false });
    const before = BigInt(Date.now());
    const idempotent = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await idempotent.connect();
    try {
      // One batch of three records (sequences 0-2), then one of two (3-4): the last sequence is 4.
      await idempotent.send({ topic: 'described', messages: [{ value: 'a' }, { value: 'b' }, { value: 'c' }] });
      await idempotent.send({ topic: 'described', messages: [{ value: 'd' }, { value: 'e' }] });
    } finally {
      await idempotent.disconnect();
    }
    const plain = kafka.producer({ idempotent: false });
    await plain.connect();
    await plain.send({ topic: 'described', messages: [{ value: 'plain' }] }).finally(() => plain.disconnect());
    await produceRaw(raw, 'described', 424_242n, 3, 0, 2);
    const sdk = await run.client.producer({ topic: 'public/default/described', producerName: 'sdk-writer' });
    await sdk.send('from the SDK');
    await sdk.close();
    const after = BigInt(Date.now());

    const [partition] = await describe0(raw, 'described', [0]);
    expect(partition).toMatchObject({ partitionIndex: 0, errorCode: KafkaErrorCode.NONE });
    const producers = partition!.activeProducers;
    expect(producers).toHaveLength(2);
    const fromKafkajs = producers.find((producer) => producer.producerId !== 424_242n)!;
    expect(fromKafkajs).toMatchObject({
      producerEpoch: 0,
      lastSequence: 4,
      coordinatorEpoch: -1,
      currentTxnStartOffset: -1n,
    });
    expect(fromKafkajs.producerId).toBeGreaterThanOrEqual(0n);
    const fromRaw = producers.find((producer) => producer.producerId === 424_242n)!;
    expect(fromRaw).toMatchObject({ producerEpoch: 3, lastSequence: 1 });
    for (const producer of producers) {
      expect(producer.lastTimestamp).toBeGreaterThanOrEqual(before);
      expect(producer.lastTimestamp).toBeLessThanOrEqual(after);
    }

    // A new owner of the partition recovers the marks, without the time its snapshot does not keep.
    await run.client.unloadTopic('public/default/described');
    const [reloaded] = await describe0(raw, 'described', [0]);
    expect(reloaded!.activeProducers).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ producerId: fromKafkajs.producerId, lastSequence: 4, lastTimestamp: -1n }),
        expect.objectContaining({ producerId: 424_242n, producerEpoch: 3, lastSequence: 1, lastTimestamp: -1n }),
      ]),
    );
  });

  it('answers an unknown topic or partition UNKNOWN_TOPIC_OR_PARTITION, and closes on a version not served', async () => {
    expect(await describe0(raw, 'never-created', [0])).toEqual([
      expect.objectContaining({
        partitionIndex: 0,
        errorCode: KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        activeProducers: [],
      }),
    ]);
    await admin.createTopics({ topics: [{ topic: 'one-partition', numPartitions: 1 }], waitForLeaders: false });
    expect((await describe0(raw, 'one-partition', [0, 7])).map((partition) => partition.errorCode)).toEqual([
      KafkaErrorCode.NONE,
      KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    ]);
    // DescribeProducers v1 (key 61, version 1, correlation 9, client "j", no tags; no topics): Kafka closes the
    // connection on a version it does not serve, and so does the gateway; it goes on serving others.
    const body = Buffer.from([0, 61, 0, 1, 0, 0, 0, 9, 0, 1, 0x6a, 0, 1, 0]);
    const size = Buffer.alloc(4);
    size.writeInt32BE(body.length);
    const socket = connect(run.standalone.kafka!.port, '127.0.0.1');
    socket.on('error', () => undefined);
    const closed = new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the gateway kept the connection open')), KAFKA_WAIT_MS);
      let received = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
      socket.on('close', () => {
        clearTimeout(timer);
        resolve(received);
      });
    });
    socket.write(Buffer.concat([size, body]));
    expect((await closed).length).toBe(0);
    expect(await describe0(raw, 'one-partition', [0])).toEqual([
      expect.objectContaining({ errorCode: KafkaErrorCode.NONE }),
    ]);
  });

  it('lists the commits of a group without members for OffsetFetch of all topics (null), from its index', async () => {
    await admin.createTopics({ topics: [{ topic: 'committed-once', numPartitions: 3 }], waitForLeaders: false });
    const commit = answered(
      await raw.request(ApiKey.OffsetCommit, 2, {
        groupId: 'gone-quiet',
        generationId: -1,
        memberId: '',
        retentionTimeMs: -1n,
        topics: [
          {
            name: 'committed-once',
            partitions: [
              { partitionIndex: 0, committedOffset: 0n, committedMetadata: 'zero' },
              { partitionIndex: 2, committedOffset: 0n, committedMetadata: null },
            ],
          },
        ],
      }),
    );
    expect(commit).toMatchObject({ topics: [{ partitions: [{ errorCode: 0 }, { errorCode: 0 }] }] });
    const all = answered(await raw.request(ApiKey.OffsetFetch, 3, { groupId: 'gone-quiet', topics: null }));
    expect(all).toMatchObject({ errorCode: KafkaErrorCode.NONE });
    expect(all['topics']).toEqual([
      {
        name: 'committed-once',
        partitions: [
          expect.objectContaining({ partitionIndex: 0, committedOffset: 0n, metadata: 'zero' }),
          expect.objectContaining({ partitionIndex: 2, committedOffset: 0n, metadata: '' }),
        ],
      },
    ]);
    // kafkajs's fetchOffsets without topics asks for all of them the same way.
    const fetched = await admin.fetchOffsets({ groupId: 'gone-quiet' });
    expect(fetched).toEqual([
      {
        topic: 'committed-once',
        partitions: [
          expect.objectContaining({ partition: 0, offset: '0' }),
          expect.objectContaining({ partition: 2, offset: '0' }),
        ],
      },
    ]);
  });
});

describe('DescribeProducers across a restart of standalone', () => {
  let dir: string | undefined;
  let standalone: RunningStandalone | undefined;
  afterAll(async () => {
    await standalone?.shutdown('test over');
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  /** Starts standalone on the spec's data folder and runs `work` with admin clients of its Kafka listener. */
  async function started<T>(work: (clients: KafkaAdminClients) => Promise<T>): Promise<T> {
    dir ??= mkdtempSync(join(tmpdir(), 'ledgerline-kafka-producers-restart-'));
    standalone = await startTestStandalone(join(dir, 'data'), 'silent', ['--group-initial-rebalance-delay-ms', '0']);
    const clients = await openKafkaAdmin(`127.0.0.1:${standalone.kafka!.port}`);
    try {
      return await work(clients);
    } finally {
      await clients.close();
    }
  }

  it("answers an idempotent producer's last sequence after the process restarted (the owner recovers it)", async () => {
    await started(async ({ admin, raw }) => {
      await admin.createTopics({ topics: [{ topic: 'outlives', numPartitions: 1 }], waitForLeaders: false });
      await produceRaw(raw, 'outlives', 77n, 1, 0, 3);
      await produceRaw(raw, 'outlives', 77n, 1, 3, 2);
    });
    await standalone!.shutdown('restart');
    standalone = undefined;
    const [partition] = await started(({ raw }) => describe0(raw, 'outlives', [0]));
    expect(partition).toMatchObject({ errorCode: KafkaErrorCode.NONE });
    expect(partition!.activeProducers).toEqual([
      expect.objectContaining({ producerId: 77n, producerEpoch: 1, lastSequence: 4, coordinatorEpoch: -1 }),
    ]);
  });
});
