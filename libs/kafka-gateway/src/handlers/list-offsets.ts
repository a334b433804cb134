import { KafkaErrorCode, type DecodedRequest, type Message } from '@ledgerline/kafka-protocol';
import type { GatewayContext } from '../gateway-context.js';
import { kafkaErrorOf } from '../kafka-errors.js';
import type { Session } from '../session.js';

/** ListOffsets' special timestamps. */
const LATEST = -1n;
const EARLIEST = -2n;

async function offsetOf(
  context: GatewayContext,
  topicName: string,
  partition: { partitionIndex: number; timestamp: bigint },
  session: Session,
): Promise<{ errorCode: number; offset: bigint; timestamp: bigint }> {
  try {
    const topic = await context.resolvePartition(topicName, partition.partitionIndex, session.caller);
    if (partition.timestamp === LATEST) {
      return {
        errorCode: KafkaErrorCode.NONE,
        offset: await context.backend.nextOffset(topic, session.caller),
        timestamp: -1n,
      };
    }
    if (partition.timestamp === EARLIEST) {
      return {
        errorCode: KafkaErrorCode.NONE,
        offset: await context.backend.earliestOffset(topic, session.caller),
        timestamp: -1n,
      };
    }
    const found = await context.backend.offsetForTime(topic, partition.timestamp, session.caller);
    // Kafka's answer when no message is that recent: offset and timestamp -1.
    if (found === undefined) return { errorCode: KafkaErrorCode.NONE, offset: -1n, timestamp: -1n };
    return { errorCode: KafkaErrorCode.NONE, offset: found.offset, timestamp: found.timestampMs };
  } catch (error) {
    return { errorCode: kafkaErrorOf(error), offset: -1n, timestamp: -1n };
  }
}

/**
 * ListOffsets v0-5: latest (-1) is the next offset, earliest (-2) the first
 * retained one, a time the first record whose own timestamp is at or after
 * it, with that timestamp (Kafka's CreateTime lookup: the offset index's
 * running maximum of each entry's largest record timestamp, then the entry's
 * records; a record stamped -1 never matches, and an entry stored without its
 * largest timestamp counts with its broker time).
 */
export async function handleListOffsets(
  context: GatewayContext,
  request: DecodedRequest,
  session: Session,
): Promise<Message> {
  const topics = request.body['topics'] as {
    name: string;
    partitions: { partitionIndex: number; timestamp: bigint }[];
  }[];
  return {
    throttleTimeMs: 0,
    topics: await Promise.all(
      topics.map(async (topic) => ({
        name: topic.name,
        partitions: await Promise.all(
          topic.partitions.map(async (partition) => {
            const found = await offsetOf(context, topic.name, partition, session);
            return {
              partitionIndex: partition.partitionIndex,
              errorCode: found.errorCode,
              oldStyleOffsets: found.offset >= 0n ? [found.offset] : [],
              timestamp: found.timestamp,
              offset: found.offset,
              leaderEpoch: 0,
            };
          }),
        ),
      })),
    ),
  };
}
