import {
  decodeRecordBatches,
  KafkaErrorCode,
  type DecodedRequest,
  type Message,
  type RecordBatch,
} from '@ledgerline/kafka-protocol';
import { LedgerlineError } from '@ledgerline/errors';
import type { GatewayContext } from '../gateway-context.js';
import { errorMessageOf, kafkaErrorOf } from '../kafka-errors.js';
import { kafkaProducerName } from '../kafka-producer-names.js';
import { largestRecordTimestamp, storedMessage, type StoredMessage } from '../record-mapping.js';
import { GatewayReason } from '../reasons.js';
import type { Session } from '../session.js';

const ACKS = new Set([0, 1, -1]);

interface PartitionData {
  partitionIndex: number;
  records: Buffer | null;
}

function partitionResult(
  partitionIndex: number,
  errorCode: number,
  baseOffset = -1n,
  errorMessage: string | null = null,
): Message {
  return {
    partitionIndex,
    errorCode,
    baseOffset,
    logAppendTimeMs: -1n,
    logStartOffset: -1n,
    recordErrors: [],
    errorMessage,
  };
}

/** Idempotent producers dedupe by producer name (kafkaProducerName); others have none. */
function producerName(batch: RecordBatch): string {
  return batch.producerId >= 0n ? kafkaProducerName(batch.producerId, batch.producerEpoch) : '';
}

/** A batch ready for its owner: mapped and checked, so that a refused batch of a request stores nothing of it. */
interface PreparedBatch {
  batch: RecordBatch;
  messages: StoredMessage[];
}

/** Decodes and maps every data batch of a partition's records before any is sent; throws what refuses them. */
function prepareBatches(context: GatewayContext, records: Buffer): PreparedBatch[] {
  const batches = decodeRecordBatches(records, {
    maxDecompressedBytes: context.settings.kafkaMaxFrameSizeBytes * 4,
  });
  const limit = context.settings.kafkaMaxMessageBytes;
  const tooLarge = batches.find((batch) => (batch.sizeInBytes ?? 0) > limit);
  if (tooLarge !== undefined) {
    // As Kafka's broker checks each batch as sent against message.max.bytes, before anything of the request is stored.
    throw new LedgerlineError(
      'RESOURCE_EXHAUSTED',
      GatewayReason.KAFKA_MESSAGE_TOO_LARGE,
      `a record batch of ${tooLarge.sizeInBytes} bytes is larger than message.max.bytes (${limit})`,
    );
  }
  return batches
    .filter((batch) => !batch.control && batch.records.length > 0)
    .map((batch) => ({ batch, messages: batch.records.map((record) => storedMessage(batch, record)) }));
}

async function producePartition(
  context: GatewayContext,
  topicName: string,
  data: PartitionData,
  session: Session,
): Promise<Message> {
  // Taken before the first await, so in arrival order; released once this request's batches are with the owner.
  const order = session.produceOrder.take(`${topicName}\u0000${data.partitionIndex}`);
  try {
    await order.turn;
    const topic = await context.resolvePartition(topicName, data.partitionIndex, session.caller, true);
    if (data.records === null || data.records.length === 0) {
      return partitionResult(data.partitionIndex, KafkaErrorCode.CORRUPT_MESSAGE, -1n, 'no records');
    }
    const prepared = prepareBatches(context, data.records);
    let baseOffset: bigint | undefined;
    let duplicateUnknown = false;
    for (const [index, { batch, messages }] of prepared.entries()) {
      // One Kafka batch is one entry (a Pulsar batch): its messages take consecutive offsets.
      const receipt = await context.backend.publish(
        topic,
        {
          messages,
          producerName: producerName(batch),
          sequenceId: BigInt(Math.max(batch.baseSequence, 0)),
          // Kafka numbers an idempotent producer's batches without gaps: one that skips is refused, not stored ahead.
          contiguousSequence: batch.producerId >= 0n,
          maxTimestampMs: largestRecordTimestamp(batch),
        },
        session.caller,
        // Earlier batches of the request were stored before this one was sent; the next request goes after the last.
        index === prepared.length - 1 ? order.issued : undefined,
      );
      if (receipt.duplicate && receipt.position === undefined) duplicateUnknown = true;
      baseOffset ??= receipt.firstOffset;
    }
    if (duplicateUnknown) return partitionResult(data.partitionIndex, KafkaErrorCode.DUPLICATE_SEQUENCE_NUMBER);
    return partitionResult(data.partitionIndex, KafkaErrorCode.NONE, baseOffset ?? -1n);
  } catch (error) {
    return partitionResult(data.partitionIndex, kafkaErrorOf(error), -1n, errorMessageOf(error));
  } finally {
    order.issued();
  }
}

/**
 * Produce v3-8 (RecordBatch v2). Each partition's batches become entries of
 * its topic; acks 1 and -1 both answer once the ledger store holds the entry
 * (there are no replicas to wait for beyond it); acks 0 gets no answer.
 */
export async function handleProduce(
  context: GatewayContext,
  request: DecodedRequest,
  session: Session,
): Promise<Message | undefined> {
  const acks = request.body['acks'] as number;
  const transactional = request.body['transactionalId'] !== null;
  const topics = request.body['topics'] as { name: string; partitions: PartitionData[] }[];
  const responses = await Promise.all(
    topics.map(async (topic) => ({
      name: topic.name,
      partitions: await Promise.all(
        topic.partitions.map((data) => {
          if (!ACKS.has(acks)) return partitionResult(data.partitionIndex, KafkaErrorCode.INVALID_REQUIRED_ACKS);
          // Transactions are not served: the code Kafka answers for a feature the broker lacks.
          if (transactional) return partitionResult(data.partitionIndex, KafkaErrorCode.UNSUPPORTED_VERSION);
          // Stopping: Metadata now names another gateway the leader; the client asks it again and sends there.
          if (context.peers.leaving())
            return partitionResult(data.partitionIndex, KafkaErrorCode.NOT_LEADER_OR_FOLLOWER);
          return producePartition(context, topic.name, data, session);
        }),
      ),
    })),
  );
  if (acks === 0) return undefined;
  return { responses, throttleTimeMs: 0 };
}
