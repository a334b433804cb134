import { LedgerlineError } from '@ledgerline/errors';
import { KafkaErrorCode, type DecodedRequest, type Message } from '@ledgerline/kafka-protocol';
import type { GatewayContext } from '../gateway-context.js';
import { kafkaErrorOf } from '../kafka-errors.js';
import type { Session } from '../session.js';

/** Kafka's "latest": delete every record below the high watermark. */
const HIGH_WATERMARK = -1n;
/** What Kafka answers as the low watermark of a partition whose deletion failed (INVALID_LOW_WATERMARK). */
const NO_LOW_WATERMARK = -1n;
/** The largest offset the owners take: anything past it is past the end of every topic. */
const MAX_OFFSET = BigInt(Number.MAX_SAFE_INTEGER);

type DeletionTopic = { name: string; partitions: { partitionIndex: number; offset: bigint }[] };

/** The Kafka error code of a refused deletion: an offset past the end is Kafka's OFFSET_OUT_OF_RANGE. */
function deletionErrorOf(error: unknown): number {
  if (error instanceof LedgerlineError && error.code === 'OUT_OF_RANGE') return KafkaErrorCode.OFFSET_OUT_OF_RANGE;
  const code = kafkaErrorOf(error);
  // A name no topic can have names no topic.
  return code === KafkaErrorCode.INVALID_REQUEST ? KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION : code;
}

async function deleteBefore(
  context: GatewayContext,
  topic: string,
  partition: number,
  offset: bigint,
  session: Session,
): Promise<Message> {
  const answer = (errorCode: number, lowWatermark = NO_LOW_WATERMARK): Message => ({
    partitionIndex: partition,
    lowWatermark,
    errorCode,
  });
  try {
    const ledgerlineTopic = await context.resolvePartition(topic, partition, session.caller);
    if (offset < HIGH_WATERMARK || offset > MAX_OFFSET) return answer(KafkaErrorCode.OFFSET_OUT_OF_RANGE);
    return answer(KafkaErrorCode.NONE, await context.backend.deleteRecords(ledgerlineTopic, offset, session.caller));
  } catch (error) {
    return answer(deletionErrorOf(error));
  }
}

/**
 * DeleteRecords v0-2: each partition's messages before the offset are
 * deleted on its writer owner (TopicsService.DeleteRecords) and the low
 * watermark answered, as Kafka's leader answers: -1 deletes up to the high
 * watermark, an offset past it (or below -1) is OFFSET_OUT_OF_RANGE, one at
 * or below the low watermark deletes nothing and answers the watermark. From
 * then on a Fetch below it is OFFSET_OUT_OF_RANGE and ListOffsets' earliest
 * is it. The topic's tenant admin only (TOPIC_AUTHORIZATION_FAILED
 * otherwise), as Kafka's DELETE on a topic; a topic of a reader namespace
 * (PIP-63) is POLICY_VIOLATION, as a produce there is.
 */
export async function handleDeleteRecords(
  context: GatewayContext,
  request: DecodedRequest,
  session: Session,
): Promise<Message> {
  const topics = await Promise.all(
    (request.body['topics'] as DeletionTopic[]).map(async (topic) => ({
      name: topic.name,
      partitions: await Promise.all(
        topic.partitions.map((partition) =>
          deleteBefore(context, topic.name, partition.partitionIndex, partition.offset, session),
        ),
      ),
    })),
  );
  return { throttleTimeMs: 0, topics };
}
