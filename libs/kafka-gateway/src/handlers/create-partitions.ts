import { LedgerlineError } from '@ledgerline/errors';
import { KafkaErrorCode, type DecodedRequest, type Message } from '@ledgerline/kafka-protocol';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';
import type { GatewayContext } from '../gateway-context.js';
import { errorMessageOf } from '../kafka-errors.js';
import { checkAssignments, type AssignmentRefusal } from '../replica-assignments.js';
import type { Session } from '../session.js';
import { topicAdminErrorOf } from '../topic-admin-errors.js';
import { MAX_PARTITIONS, timesNamed } from './topics-admin.js';

type Growable = { name: string; count: number; assignments: { brokerIds: number[] }[] | null };

/**
 * Why a topic with `current` Ledgerline partitions (0: not partitioned) may
 * not grow to `count`, as Kafka's controller words it
 * (ReplicationControlManager.createPartitions), or undefined when it may.
 */
function refusalOf(context: GatewayContext, topic: Growable, current: number): AssignmentRefusal | undefined {
  const invalidPartitions = (errorMessage: string) => ({ errorCode: KafkaErrorCode.INVALID_PARTITIONS, errorMessage });
  const kafkaCurrent = current === 0 ? 1 : current;
  if (topic.count < kafkaCurrent) {
    return invalidPartitions(
      `The topic ${topic.name} currently has ${kafkaCurrent} partition(s); ${topic.count} would not be an increase.`,
    );
  }
  if (topic.count === kafkaCurrent) return invalidPartitions(`Topic already has ${kafkaCurrent} partition(s).`);
  if (current === 0) {
    return invalidPartitions(
      `${topic.name} is a non-partitioned Ledgerline topic: it keeps its one partition (a partitioned topic can grow)`,
    );
  }
  if (topic.count > MAX_PARTITIONS) return invalidPartitions(`${topic.count} partitions: at most ${MAX_PARTITIONS}`);
  if (topic.assignments === null) return undefined;
  const added = topic.count - current;
  if (topic.assignments.length !== added) {
    return {
      errorCode: KafkaErrorCode.INVALID_REPLICA_ASSIGNMENT,
      errorMessage: `Attempted to add ${added} additional partition(s), but only ${topic.assignments.length} assignment(s) were specified.`,
    };
  }
  return checkAssignments(
    topic.assignments.map((assignment) => assignment.brokerIds),
    new Set(context.peers.brokers().map((broker) => broker.nodeId)),
  );
}

async function growOne(
  context: GatewayContext,
  topic: Growable,
  validateOnly: boolean,
  session: Session,
): Promise<Message> {
  const result = (errorCode: number, errorMessage: string | null = null): Message => ({
    name: topic.name,
    errorCode,
    errorMessage,
  });
  let ledgerlineTopic: string;
  try {
    ledgerlineTopic = context.names.ledgerlineTopic(topic.name);
  } catch (error) {
    // A name no topic can have names no topic: Kafka's controller answers that the topic is unknown.
    return result(KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessageOf(error));
  }
  try {
    const current = await context.backend.partitions(ledgerlineTopic, session.caller);
    if (current === undefined) return result(KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `${topic.name} does not exist`);
    const refused = refusalOf(context, topic, current);
    if (refused !== undefined) return result(refused.errorCode, refused.errorMessage);
    await context.backend.growTopic(ledgerlineTopic, topic.count, validateOnly, session.caller);
    if (!validateOnly) context.forgetTopic(ledgerlineTopic);
    return result(KafkaErrorCode.NONE);
  } catch (error) {
    return result(createPartitionsErrorOf(error), errorMessageOf(error));
  }
}

/** The metadata service's refusals of a grow in Kafka's terms: its count checks are INVALID_PARTITIONS. */
function createPartitionsErrorOf(error: unknown): number {
  if (
    error instanceof LedgerlineError &&
    (error.reason === MetadataServiceReason.PARTITION_COUNT_NOT_INCREASED ||
      error.reason === MetadataServiceReason.TOPIC_NOT_PARTITIONED ||
      error.reason === MetadataServiceReason.INVALID_PARTITIONS)
  ) {
    return KafkaErrorCode.INVALID_PARTITIONS;
  }
  return topicAdminErrorOf(error);
}

/**
 * CreatePartitions v0-3: a Kafka topic gains partitions, its partitioned
 * topic the same new `-partition-i` topics (UpdatePartitionedTopic), the
 * existing ones untouched. Partitions are only ever added; manual assignments
 * are checked as Kafka's controller checks them, the brokers being the live
 * gateways (replica-assignments.ts). A topic named twice in one request is
 * INVALID_REQUEST for each, as Kafka answers.
 */
export async function handleCreatePartitions(
  context: GatewayContext,
  request: DecodedRequest,
  session: Session,
): Promise<Message> {
  const validateOnly = request.body['validateOnly'] === true;
  const topics = request.body['topics'] as Growable[];
  const named = timesNamed(topics);
  const results = await Promise.all(
    topics.map((topic) =>
      named.get(topic.name)! > 1
        ? { name: topic.name, errorCode: KafkaErrorCode.INVALID_REQUEST, errorMessage: 'Duplicate topic in request.' }
        : growOne(context, topic, validateOnly, session),
    ),
  );
  return { throttleTimeMs: 0, results };
}
