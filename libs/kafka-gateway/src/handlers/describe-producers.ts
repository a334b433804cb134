import { KafkaErrorCode, type DecodedRequest, type Message } from '@ledgerline/kafka-protocol';
import type { ProducerMark } from '../backend-types.js';
import type { GatewayContext } from '../gateway-context.js';
import { errorMessageOf, kafkaErrorOf } from '../kafka-errors.js';
import { kafkaProducerOf } from '../kafka-producer-names.js';
import type { Session } from '../session.js';

type AskedTopic = { name: string; partitionIndexes: number[] };
const INT32_SPAN = 2n ** 31n;

/**
 * The Kafka error code of a partition whose producers could not be read.
 * Any gateway serves every partition, so NOT_LEADER_OR_FOLLOWER (an owner
 * moving) would send the client looking for another leader: it is a
 * retriable REQUEST_TIMED_OUT here; a name no topic can have names no topic.
 */
function describeErrorOf(error: unknown): number {
  const code = kafkaErrorOf(error);
  if (code === KafkaErrorCode.NOT_LEADER_OR_FOLLOWER) return KafkaErrorCode.REQUEST_TIMED_OUT;
  return code === KafkaErrorCode.INVALID_REQUEST ? KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION : code;
}

/**
 * One producer as DescribeProducers answers it. The owner's sequence id is
 * the highest stored, the last record's of the producer's last batch (base
 * sequence plus records, minus one), which is Kafka's last_sequence; Kafka's
 * sequences wrap past 2^31 - 1 to 0, so does the answer. last_timestamp is
 * when the owner stored that batch (-1 when it knows only the mark a
 * snapshot kept); no transactions, so no coordinator epoch nor transaction.
 */
function activeProducer(mark: ProducerMark): Message | undefined {
  const producer = kafkaProducerOf(mark.name);
  if (producer === undefined) return undefined;
  return {
    producerId: producer.producerId,
    producerEpoch: producer.producerEpoch,
    lastSequence: Number(mark.lastSequenceId % INT32_SPAN),
    lastTimestamp: mark.lastPublishTimeMs > 0n ? mark.lastPublishTimeMs : -1n,
    coordinatorEpoch: -1,
    currentTxnStartOffset: -1n,
  };
}

async function describePartition(
  context: GatewayContext,
  topic: string,
  partitionIndex: number,
  session: Session,
): Promise<Message> {
  try {
    const ledgerlineTopic = await context.resolvePartition(topic, partitionIndex, session.caller);
    const marks = await context.backend.producers(ledgerlineTopic, session.caller);
    const activeProducers = marks.map(activeProducer).filter((each) => each !== undefined);
    return { partitionIndex, errorCode: KafkaErrorCode.NONE, errorMessage: null, activeProducers };
  } catch (error) {
    const errorCode = describeErrorOf(error);
    return { partitionIndex, errorCode, errorMessage: errorMessageOf(error), activeProducers: [] };
  }
}

/**
 * DescribeProducers v0 (KIP-664): each partition's active idempotent
 * producers, as its writer owner's deduplication knows them
 * (TopicsService.ListProducers: the consume right on the topic, Kafka's
 * READ; TOPIC_AUTHORIZATION_FAILED otherwise), the most recently active
 * 1,000 at most. SDK producers are not Kafka's and are left out. An unknown
 * topic or partition is UNKNOWN_TOPIC_OR_PARTITION.
 */
export async function handleDescribeProducers(
  context: GatewayContext,
  request: DecodedRequest,
  session: Session,
): Promise<Message> {
  const asked = request.body['topics'] as AskedTopic[];
  const topics = await Promise.all(
    asked.map(async (topic) => ({
      name: topic.name,
      partitions: await Promise.all(
        topic.partitionIndexes.map((index) => describePartition(context, topic.name, index, session)),
      ),
    })),
  );
  return { throttleTimeMs: 0, topics };
}
