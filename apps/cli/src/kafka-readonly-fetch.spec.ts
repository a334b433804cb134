import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type LedgerlineClient } from '@ledgerline/client';
import { AdminService } from '@ledgerline/proto';
import { closeClient, createClient as createGrpcClient } from '@ledgerline/rpc';
import { Kafka, logLevel } from 'kafkajs';
import type { RunningStandalone } from './standalone.js';
import { consumeMessages, failureOf } from './testing/kafka-clients.js';
import { startTestStandalone } from './testing/test-standalone.js';

/*
 * PIP-63 through the Kafka gateway, our version of KIP-392's follower
 * fetching: a Kafka consumer that names a topic of a reader namespace fetches
 * it from the read-only owner, at the writer topic's offsets, while producers
 * keep writing through the writer owner.
 */

const WRITER_NAMESPACE = 'public/default';
const READER_NAMESPACE = 'public/mirror';
const MESSAGES = 40;

describe('Kafka Fetch of a reader namespace', () => {
  let dir: string;
  let standalone: RunningStandalone;
  let kafka: Kafka;
  let sdk: LedgerlineClient;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-kafka-readonly-'));
    standalone = await startTestStandalone(join(dir, 'data'), 'silent', ['--group-initial-rebalance-delay-ms', '0']);
    const admin = createGrpcClient(AdminService, `127.0.0.1:${standalone.grpcPort}`);
    try {
      await admin.createNamespace({ namespace: READER_NAMESPACE, policies: { ownerGroup: 'readers' } });
      await admin.setWriterNamespace({ namespace: READER_NAMESPACE, writerNamespace: WRITER_NAMESPACE });
    } finally {
      closeClient(admin);
    }
    kafka = new Kafka({
      clientId: 'readonly-spec',
      brokers: [`127.0.0.1:${standalone.kafka!.port}`],
      logLevel: logLevel.NOTHING,
      retry: { retries: 3, initialRetryTime: 50 },
    });
    sdk = createClient({ serviceUrl: `127.0.0.1:${standalone.grpcPort}` });
  });
  afterAll(async () => {
    await sdk?.close();
    await standalone?.shutdown('test over');
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves a group consumer from the read-only owner at the offsets the producer was given', async () => {
    const producer = kafka.producer({ allowAutoTopicCreation: true });
    await producer.connect();
    const acked = new Map<string, string>();
    try {
      for (let batch = 0; batch < MESSAGES / 10; batch++) {
        const values = Array.from({ length: 10 }, (_, index) => `m${batch * 10 + index}`);
        const [receipt] = await producer.send({ topic: 'mirrored', messages: values.map((value) => ({ value })) });
        values.forEach((value, index) => acked.set(value, String(Number(receipt!.baseOffset) + index)));
      }
    } finally {
      await producer.disconnect();
    }
    expect(standalone.readOnly.owner.registry.all()).toHaveLength(0);

    const consumer = kafka.consumer({ groupId: 'mirror-readers', sessionTimeout: 10_000, maxWaitTimeInMs: 200 });
    await consumer.connect();
    try {
      await consumer.subscribe({ topic: `${READER_NAMESPACE}/mirrored`, fromBeginning: true });
      const got = await consumeMessages(consumer, MESSAGES, { autoCommit: false });
      expect(new Map(got.map(({ message }) => [message.value!.toString(), message.offset]))).toEqual(acked);
      await consumer.commitOffsets([{ topic: `${READER_NAMESPACE}/mirrored`, partition: 0, offset: '30' }]);
    } finally {
      await consumer.disconnect();
    }
    // The commit (at an entry's start: a batch of 10 is one entry) is the reader subscription's cursor, which the
    // writer owner keeps (PIP-63): it reads back, and the writer topic retains what the group has not consumed.
    const admin = kafka.admin();
    await admin.connect();
    try {
      const [committed] = await admin.fetchOffsets({
        groupId: 'mirror-readers',
        topics: [`${READER_NAMESPACE}/mirrored`],
      });
      expect(committed!.partitions).toEqual([{ partition: 0, offset: '30', metadata: null }]);
    } finally {
      await admin.disconnect();
    }
    const [stats] = await sdk.topicStats(`${WRITER_NAMESPACE}/mirrored`);
    expect(stats!.stats.subscriptions.find((subscription) => subscription.name === 'mirror-readers')).toMatchObject({
      backlogMessages: BigInt(MESSAGES - 30),
    });
    // The read side loaded the reader view of the topic; the writer owner served no consumer of it.
    expect(standalone.readOnly.owner.registry.all().map((topic) => topic.readerTopic)).toEqual([
      `persistent://${READER_NAMESPACE}/mirrored-partition-0`,
    ]);
  });

  it('refuses a produce to a reader namespace, which only the writer topic takes', async () => {
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    try {
      const refused = await failureOf(() =>
        producer.send({ topic: `${READER_NAMESPACE}/mirrored`, messages: [{ value: 'nope' }] }),
      );
      expect(refused).toMatchObject({ type: 'POLICY_VIOLATION' });
    } finally {
      await producer.disconnect();
    }
  });
});
