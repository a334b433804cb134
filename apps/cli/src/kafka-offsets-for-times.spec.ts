import type { RawAnswer, RawKafkaClient } from '@ledgerline/kafka-gateway/testing';
import { ApiKey, KafkaErrorCode } from '@ledgerline/kafka-protocol';
import type { Admin, Kafka } from 'kafkajs';
import { kafkaAdminPerSuite } from './testing/kafka-clients.js';
import { kafkaStandaloneRun } from './testing/kafka-standalone-run.js';

// ListOffsets by time (OffsetsForTimes) on a CreateTime topic, against standalone's gateway: Kafka answers with the
// first record whose own timestamp is at or after the time, wherever the broker's clock stood when it was stored
// (librdkafka's test 0054 produces records stamped in the past and asks for them so).

/** Records stamped in September 2020, long before the broker's clock. */
const PAST_MS = 1_600_000_000_000;

interface ListedOffset {
  errorCode: number;
  offset: bigint;
  timestamp: bigint;
}

function listed(answer: RawAnswer): ListedOffset {
  if (answer === 'closed') throw new Error('the gateway closed the connection');
  const topics = answer['topics'] as { partitions: ListedOffset[] }[];
  return topics[0]!.partitions[0]!;
}

describe("Kafka OffsetsForTimes against standalone: by the records' own timestamps", () => {
  const run = kafkaStandaloneRun('kafka-offsets-for-times');
  let kafka: Kafka;
  let admin: Admin;
  let raw: RawKafkaClient;
  kafkaAdminPerSuite(run, (clients) => ({ kafka, admin, raw } = clients));

  async function listOffset(topic: string, timestamp: bigint): Promise<ListedOffset> {
    const body = {
      replicaId: -1,
      isolationLevel: 0,
      topics: [{ name: topic, partitions: [{ partitionIndex: 0, timestamp }] }],
    };
    return listed(await raw.request(ApiKey.ListOffsets, 2, body));
  }

  it('answers with the first record stamped at or after the time, across batches produced with old timestamps', async () => {
    await admin.createTopics({ topics: [{ topic: 'stamped', numPartitions: 1 }] });
    const producer = kafka.producer();
    await producer.connect();
    try {
      // Two batches (offsets 0-1 and 2-4), each record 1 s after the one before, then one record stamped now.
      const stamped = (from: number, count: number) =>
        Array.from({ length: count }, (_, index) => ({
          value: `r${from + index}`,
          timestamp: String(PAST_MS + (from + index) * 1000),
        }));
      await producer.send({ topic: 'stamped', messages: stamped(0, 2) });
      await producer.send({ topic: 'stamped', messages: stamped(2, 3) });
      await producer.send({ topic: 'stamped', messages: [{ value: 'now' }] });
    } finally {
      await producer.disconnect();
    }
    for (const [second, offset] of [
      [0, 0n],
      [0.5, 1n],
      [1, 1n],
      [2.5, 3n],
      [4, 4n],
      [4.5, 5n],
    ] as const) {
      const answer = await listOffset('stamped', BigInt(PAST_MS + second * 1000));
      expect({ second, errorCode: answer.errorCode, offset: answer.offset }).toEqual({
        second,
        errorCode: KafkaErrorCode.NONE,
        offset,
      });
    }
    // The timestamp answered is the record's own, as Kafka answers it.
    expect((await listOffset('stamped', BigInt(PAST_MS + 2500))).timestamp).toBe(BigInt(PAST_MS + 3000));
    // kafkajs's fetchTopicOffsetsByTimestamp asks the same question.
    expect(await admin.fetchTopicOffsetsByTimestamp('stamped', PAST_MS + 1500)).toEqual([
      { partition: 0, offset: '2' },
    ]);
    // No record is stamped that late: Kafka's offset -1.
    expect((await listOffset('stamped', BigInt(Date.now() + 3_600_000))).offset).toBe(-1n);
  });
});
