import { RawKafkaClient, recordBatchOf } from '@ledgerline/kafka-gateway/testing';
import { ApiKey, KafkaErrorCode } from '@ledgerline/kafka-protocol';
import type { Admin, Kafka, Producer } from 'kafkajs';
import { consumeMessages, KAFKA_WAIT_MS, kafkaAdminPerSuite } from './testing/kafka-clients.js';
import { kafkaStandaloneRun } from './testing/kafka-standalone-run.js';

// Produce through the gateway to a topic that was unloaded and reloaded on the same owner: the gateway's Publish
// stream to that owner stays bound to the unloaded instance of the topic (the owner refuses every later entry of
// it there), so the topic's later publishes must go on another stream, through the same gateway and client.

describe('Produce through the gateway after its topic was unloaded and reloaded on the same owner', () => {
  const run = kafkaStandaloneRun('kafka-reload');
  let kafka: Kafka;
  let admin: Admin;
  let raw: RawKafkaClient;
  kafkaAdminPerSuite(run, (clients) => ({ kafka, admin, raw } = clients));

  /** Every value of `topic`'s only partition, in offset order, and its high watermark. */
  async function contents(topic: string, count: number): Promise<{ values: string[]; highWatermark: string }> {
    const consumer = kafka.consumer({ groupId: `reader-of-${topic}`, maxWaitTimeInMs: 100 });
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      const got = await consumeMessages(consumer, count);
      const [partition] = await admin.fetchTopicOffsets(topic);
      return {
        values: got.map(({ message }) => message.value!.toString()),
        highWatermark: partition!.high,
      };
    } finally {
      await consumer.disconnect();
    }
  }

  /** Sends `before` with `producer`, unloads the topic, then sends `after` with the same producer. */
  async function acrossUnload(producer: Producer, topic: string, before: string[], after: string[]): Promise<void> {
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: false });
    await producer.connect();
    try {
      await producer.send({ topic, messages: before.map((value) => ({ value })) });
      await run.client.unloadTopic(`public/default/${topic}`);
      await producer.send({ topic, messages: after.map((value) => ({ value })) });
    } finally {
      await producer.disconnect();
    }
  }

  it('stores a kafkajs producer’s batches sent before and after the unload, each once', async () => {
    // One retry at most: the refusal it would otherwise retry on comes back at once, forever.
    const producer = kafka.producer({ idempotent: false, retry: { retries: 1, initialRetryTime: 50 } });
    await acrossUnload(producer, 'reloaded-plain', ['a', 'b'], ['c']);
    expect(await contents('reloaded-plain', 3)).toEqual({ values: ['a', 'b', 'c'], highWatermark: '3' });
  });

  it('stores an idempotent kafkajs producer’s batches sent before and after the unload, each once', async () => {
    const producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      retry: { retries: 1, initialRetryTime: 50 },
    });
    await acrossUnload(producer, 'reloaded-idempotent', ['a'], ['b', 'c']);
    expect(await contents('reloaded-idempotent', 3)).toEqual({ values: ['a', 'b', 'c'], highWatermark: '3' });
  });

  it('answers a raw idempotent Produce after the unload NONE at once, and stores it after the first', async () => {
    const topic = 'reloaded-raw';
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: false });
    const produce = async (baseSequence: number, values: string[]) =>
      raw.request(ApiKey.Produce, 7, {
        transactionalId: null,
        acks: -1,
        timeoutMs: KAFKA_WAIT_MS,
        topics: [
          {
            name: topic,
            partitions: [{ partitionIndex: 0, records: recordBatchOf(values, { producerId: 9_191n, baseSequence }) }],
          },
        ],
      });
    expect(await produce(0, ['x', 'y'])).toMatchObject({
      responses: [{ partitions: [{ errorCode: KafkaErrorCode.NONE, baseOffset: 0n }] }],
    });
    await run.client.unloadTopic(`public/default/${topic}`);
    expect(await produce(2, ['z'])).toMatchObject({
      responses: [{ partitions: [{ errorCode: KafkaErrorCode.NONE, baseOffset: 2n }] }],
    });
    expect(await contents(topic, 3)).toEqual({ values: ['x', 'y', 'z'], highWatermark: '3' });
  });
});
