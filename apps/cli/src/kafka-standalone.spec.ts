import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type LedgerlineClient } from '@ledgerline/client';
import { AdminService } from '@ledgerline/proto';
import { closeClient, createClient as createGrpcClient } from '@ledgerline/rpc';
import { eventually, refusal } from '@ledgerline/testing';
import { CompressionCodecs, CompressionTypes, Kafka, logLevel, type Consumer } from 'kafkajs';
import type { RunningStandalone } from './standalone.js';
import { KAFKA_WAIT_MS, consumeMessages } from './testing/kafka-clients.js';
import { startTestStandalone } from './testing/test-standalone.js';
import { take } from './testing/take-messages.js';

// kafkajs 2.2.4, a real Kafka client, against the Kafka gateway in front of a
// real standalone: produce with every acks setting, consume with a group,
// commit, restart everything, resume exactly after the commit, look offsets up
// by time, and see the same offsets, keys, headers and timestamps through the
// SDK as through Kafka.

// kafkajs writes snappy through a codec package it does not ship (raw snappy, as librdkafka sends it).
type Codec = (typeof CompressionCodecs)[CompressionTypes.Snappy];
// eslint-disable-next-line @typescript-eslint/no-require-imports
CompressionCodecs[CompressionTypes.Snappy] = require('kafkajs-snappy') as Codec;

/** Polls `done` until it holds, bounded by KAFKA_WAIT_MS. */
function until(what: string, done: () => boolean): Promise<void> {
  return eventually(done, { attempts: KAFKA_WAIT_MS / 50, intervalMs: 50, description: what });
}

describe('kafkajs against the Kafka gateway over a standalone', () => {
  let dir: string;
  let standalone: RunningStandalone;
  let kafka: Kafka;
  let client: LedgerlineClient;

  async function start(): Promise<void> {
    // The Kafka listener standalone serves (on a free port here); a group's first rebalance does not wait.
    standalone = await startTestStandalone(join(dir, 'data'), 'silent', ['--group-initial-rebalance-delay-ms', '0']);
    kafka = new Kafka({
      clientId: 'spec',
      brokers: [`127.0.0.1:${standalone.kafka!.port}`],
      logLevel: logLevel.NOTHING,
      retry: { retries: 3, initialRetryTime: 50 },
    });
    client = createClient({ serviceUrl: `127.0.0.1:${standalone.grpcPort}`, reconnectInitialDelayMs: 10 });
  }

  async function stop(): Promise<void> {
    await client.close();
    await standalone.shutdown('test over');
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-kafka-'));
    await start();
  });
  afterAll(async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates topics, lists them in Metadata and refuses to create one twice', async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      expect(await admin.createTopics({ topics: [{ topic: 'listed', numPartitions: 3 }] })).toBe(true);
      expect(await admin.createTopics({ topics: [{ topic: 'listed', numPartitions: 3 }] })).toBe(false);
      const metadata = await admin.fetchTopicMetadata({ topics: ['listed'] });
      expect(metadata.topics[0]!.partitions.map((partition) => partition.partitionId).sort()).toEqual([0, 1, 2]);
      expect(await admin.listTopics()).toContain('listed');
      expect((await client.topicStats('public/default/listed')).length).toBe(3);
      await admin.deleteTopics({ topics: ['listed'] });
      expect(await admin.listTopics()).not.toContain('listed');
    } finally {
      await admin.disconnect();
    }
  });

  it('produces with acks 0, 1 and -1 and reads each back at the offset its receipt gave', async () => {
    const producer = kafka.producer({ allowAutoTopicCreation: true });
    await producer.connect();
    try {
      const [first] = await producer.send({ topic: 'acks', acks: -1, messages: [{ value: 'a0' }, { value: 'a1' }] });
      const [second] = await producer.send({ topic: 'acks', acks: 1, messages: [{ value: 'a2' }] });
      await producer.send({ topic: 'acks', acks: 0, messages: [{ value: 'a3' }] });
      expect([first!.baseOffset, second!.baseOffset]).toEqual(['0', '2']);
      const reader = await client.reader({ topic: 'public/default/acks', start: { offset: 0 } });
      expect(
        (await take(reader, 4)).map((message) => [message.offset, Buffer.from(message.payload).toString()]),
      ).toEqual([
        [0n, 'a0'],
        [1n, 'a1'],
        [2n, 'a2'],
        [3n, 'a3'],
      ]);
      await reader.close();
    } finally {
      await producer.disconnect();
    }
  });

  it('auto-creates a topic only in a namespace whose policy allowAutoTopicCreation allows it', async () => {
    const admin = createGrpcClient(AdminService, `127.0.0.1:${standalone.grpcPort}`);
    const producer = kafka.producer({ allowAutoTopicCreation: true, retry: { retries: 1, initialRetryTime: 50 } });
    await producer.connect();
    try {
      // Standalone made the Kafka namespace with the policy on: plain names auto-create (the acks test above).
      const home = await admin.getNamespace({ namespace: 'public/default' });
      expect(home.namespace?.policies?.allowAutoTopicCreation).toBe(true);
      await admin.createNamespace({ namespace: 'public/closed' });
      const refused = await producer.send({ topic: 'public/closed/orders', acks: -1, messages: [{ value: 'x' }] }).then(
        () => undefined,
        (error: unknown) => error,
      );
      // kafkajs retries the refusal, then reports it as the cause of running out of retries.
      expect(refused).toMatchObject({ cause: { type: 'UNKNOWN_TOPIC_OR_PARTITION' } });
      expect(await refusal(admin.getTopic({ topic: 'public/closed/orders' }))).toMatchObject({
        reason: 'TOPIC_NOT_FOUND',
      });
      await admin.updateNamespace({ namespace: 'public/closed', policies: { allowAutoTopicCreation: true } });
      const [receipt] = await producer.send({ topic: 'public/closed/orders', acks: -1, messages: [{ value: 'y' }] });
      expect(receipt!.baseOffset).toBe('0');
      expect((await admin.getTopic({ topic: 'public/closed/orders' })).topic?.partitions).toBe(1);
    } finally {
      await producer.disconnect();
      closeClient(admin);
    }
  });

  it.each([
    ['gzip', CompressionTypes.GZIP],
    ['snappy', CompressionTypes.Snappy],
  ])('produces %s batches that read back through the SDK at the offsets their receipts gave', async (name, codec) => {
    const topic = `compressed-${name}`;
    const producer = kafka.producer({ allowAutoTopicCreation: true });
    await producer.connect();
    try {
      const messages = Array.from({ length: 100 }, (_, index) => ({
        key: `k${index}`,
        value: `v${index}-${'z'.repeat(200)}`,
      }));
      const [receipt] = await producer.send({ topic, acks: -1, compression: codec, messages });
      expect(receipt!.baseOffset).toBe('0');
      const reader = await client.reader({ topic: `public/default/${topic}`, start: { offset: 0 } });
      const read = await take(reader, messages.length);
      await reader.close();
      expect(read.map((message) => [message.key, Buffer.from(message.payload).toString()])).toEqual(
        messages.map((message) => [message.key, message.value]),
      );
      expect(read.at(-1)!.offset).toBe(99n);
    } finally {
      await producer.disconnect();
    }
  });

  it('stores a Kafka batch as one entry and shows the same offsets, keys, headers and timestamps through the SDK', async () => {
    const producer = kafka.producer({ allowAutoTopicCreation: true });
    await producer.connect();
    const timestamp = Date.now() - 60_000;
    await producer.send({
      topic: 'same',
      messages: Array.from({ length: 5 }, (_, index) => ({
        key: `key-${index}`,
        value: `value-${index}`,
        headers: { trace: `t-${index}` },
        timestamp: String(timestamp + index),
      })),
    });
    await producer.disconnect();
    const reader = await client.reader({ topic: 'public/default/same', start: { offset: 0 } });
    const read = await take(reader, 5);
    await reader.close();
    expect(read.map((message) => message.offset)).toEqual([0n, 1n, 2n, 3n, 4n]);
    expect(new Set(read.map((message) => `${message.messageId.ledgerId}:${message.messageId.entryId}`)).size).toBe(1);
    expect(read[3]).toMatchObject({ key: 'key-3', properties: { trace: 't-3' }, eventTime: timestamp + 3 });
    // And the other way round: what the SDK sends, kafkajs reads at the SDK's offsets.
    const sdkProducer = await client.producer({ topic: 'public/default/same', batching: false });
    const receipt = await sdkProducer.send('from-sdk', { key: 'sdk-key', properties: { origin: 'sdk' } });
    await sdkProducer.close();
    const consumer = kafka.consumer({ groupId: 'same-reader' });
    await consumer.connect();
    await consumer.subscribe({ topic: 'same', fromBeginning: true });
    const got = await consumeMessages(consumer, 6, { autoCommit: false });
    await consumer.disconnect();
    expect(got.map(({ message }) => message.offset)).toEqual(['0', '1', '2', '3', '4', String(receipt.offset)]);
    const last = got[5]!.message;
    expect([last.key?.toString(), last.value?.toString(), last.headers?.['origin']?.toString()]).toEqual([
      'sdk-key',
      'from-sdk',
      'sdk',
    ]);
    expect(got[2]!.message.timestamp).toBe(String(timestamp + 2));
  });

  it('looks offsets up by time, earliest and latest', async () => {
    const producer = kafka.producer({ allowAutoTopicCreation: true });
    await producer.connect();
    await producer.send({ topic: 'timed', messages: [{ value: 'before' }] });
    const between = Date.now() + 5;
    while (Date.now() <= between) await new Promise((resolve) => setTimeout(resolve, 2));
    await producer.send({ topic: 'timed', messages: [{ value: 'after-0' }, { value: 'after-1' }] });
    await producer.disconnect();
    const admin = kafka.admin();
    await admin.connect();
    try {
      expect(await admin.fetchTopicOffsetsByTimestamp('timed', between)).toEqual([{ partition: 0, offset: '1' }]);
      const [offsets] = await admin.fetchTopicOffsets('timed');
      expect(offsets).toMatchObject({ partition: 0, offset: '3', high: '3', low: '0' });
    } finally {
      await admin.disconnect();
    }
  });

  it('consumes with a group, commits, and after a restart of everything resumes exactly after the commit', async () => {
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 2 }] });
    await admin.disconnect();
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic: 'orders',
      messages: Array.from({ length: 10 }, (_, index) => ({ key: `k${index}`, value: `first-${index}` })),
    });
    await producer.disconnect();
    const consumer = kafka.consumer({ groupId: 'billing', sessionTimeout: 10_000 });
    await consumer.connect();
    await consumer.subscribe({ topic: 'orders', fromBeginning: true });
    const first = await consumeMessages(consumer, 10, { autoCommit: false });
    expect(first.map(({ message }) => message.value?.toString()).sort()).toEqual(
      Array.from({ length: 10 }, (_, index) => `first-${index}`).sort(),
    );
    const next = new Map<number, number>();
    for (const { partition, message } of first)
      next.set(partition, Math.max(next.get(partition) ?? 0, Number(message.offset) + 1));
    await consumer.commitOffsets(
      [...next].map(([partition, offset]) => ({ topic: 'orders', partition, offset: String(offset) })),
    );
    await consumer.disconnect();

    // The group's lag is its subscription's backlog: nothing left on either partition.
    const stats = await client.topicStats('public/default/orders');
    for (const { stats: partition } of stats) {
      expect(partition.subscriptions.find((subscription) => subscription.name === 'billing')?.backlogMessages).toBe(0n);
    }

    await stop();
    await start();

    const later = kafka.producer();
    await later.connect();
    await later.send({
      topic: 'orders',
      messages: Array.from({ length: 4 }, (_, index) => ({ key: `k${index}`, value: `second-${index}` })),
    });
    await later.disconnect();
    const checker = kafka.admin();
    await checker.connect();
    const [committed] = await checker.fetchOffsets({ groupId: 'billing', topics: ['orders'] });
    await checker.disconnect();
    expect(committed!.partitions.map(({ partition, offset }) => [partition, Number(offset)]).sort()).toEqual(
      [...next].sort(),
    );
    const resumed = kafka.consumer({ groupId: 'billing', sessionTimeout: 10_000 });
    await resumed.connect();
    await resumed.subscribe({ topic: 'orders', fromBeginning: true });
    const second = await consumeMessages(resumed, 4, { autoCommit: false });
    await resumed.disconnect();
    expect(second.map(({ message }) => message.value?.toString()).sort()).toEqual([
      'second-0',
      'second-1',
      'second-2',
      'second-3',
    ]);
    for (const { partition, message } of second)
      expect(Number(message.offset)).toBeGreaterThanOrEqual(next.get(partition) ?? 0);
  });

  it("moves the group's subscription on every commit, forward and back, so its backlog is the group's lag", async () => {
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'lagging', numPartitions: 1 }] });
    const producer = kafka.producer();
    await producer.connect();
    // One message per entry: a subscription's position is an entry, so its backlog moves by whole entries.
    for (let index = 0; index < 30; index++)
      await producer.send({ topic: 'lagging', messages: [{ value: `m${index}` }] });
    await producer.disconnect();
    const backlog = async (): Promise<bigint | undefined> => {
      const [partition] = await client.topicStats('public/default/lagging');
      return partition!.stats.subscriptions.find((subscription) => subscription.name === 'auditors')?.backlogMessages;
    };
    const consumer = kafka.consumer({ groupId: 'auditors', sessionTimeout: 10_000 });
    await consumer.connect();
    await consumer.subscribe({ topic: 'lagging', fromBeginning: true });
    // A member of the group (it has read everything once) commits where it likes.
    await consumeMessages(consumer, 30, { autoCommit: false });
    // The first commit creates the subscription; every later one moves it, to the end as well.
    for (const offset of [10, 25, 5, 30, 0]) {
      await consumer.commitOffsets([{ topic: 'lagging', partition: 0, offset: String(offset) }]);
      expect(await backlog()).toBe(BigInt(30 - offset));
      const [committed] = await admin.fetchOffsets({ groupId: 'auditors', topics: ['lagging'] });
      expect(committed!.partitions).toEqual([expect.objectContaining({ partition: 0, offset: String(offset) })]);
    }
    await consumer.disconnect();
    await admin.disconnect();
  });

  it('rebalances a group of three when one member leaves and when another joins', async () => {
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'trio', numPartitions: 3 }] });
    await admin.disconnect();
    const assigned = new Map<Consumer, number[]>();
    const member = async (): Promise<Consumer> => {
      // Members learn of a rebalance from a heartbeat, sent between fetches: short polls make that quick.
      const consumer = kafka.consumer({
        groupId: 'trio',
        heartbeatInterval: 200,
        sessionTimeout: 10_000,
        maxWaitTimeInMs: 300,
      });
      consumer.on(consumer.events.GROUP_JOIN, (event) =>
        assigned.set(consumer, event.payload.memberAssignment['trio'] ?? []),
      );
      await consumer.connect();
      await consumer.subscribe({ topic: 'trio', fromBeginning: true });
      await consumer.run({ eachMessage: async () => undefined });
      return consumer;
    };
    const covers = (members: Consumer[], each: number): boolean => {
      const partitions = members.flatMap((consumer) => assigned.get(consumer) ?? []);
      return (
        members.every((consumer) => (assigned.get(consumer)?.length ?? 0) >= each) &&
        new Set(partitions).size === 3 &&
        partitions.length === 3
      );
    };
    const [a, b, c] = [await member(), await member(), await member()];
    await until('three members with one partition each', () => covers([a, b, c], 1));
    await c.disconnect();
    await until('the two left sharing all three partitions', () => covers([a, b], 1));
    const d = await member();
    await until('a newcomer taking a partition', () => covers([a, b, d], 1));
    await Promise.all([a, b, d].map((consumer) => consumer.disconnect()));
  }, 60_000);
});
