import { LedgerlineError } from '@ledgerline/errors';
import { KafkaErrorCode, type DecodedRequest, type Message } from '@ledgerline/kafka-protocol';
import type { GatewayContext } from '../gateway-context.js';
import { kafkaErrorOf } from '../kafka-errors.js';
import type { Session } from '../session.js';
import { kafkaPartitionCount } from '../topic-names.js';

/** Authorized operations are not computed (Kafka's "not requested" value). */
const OPERATIONS_UNKNOWN = -2147483648;

function topicError(name: string, errorCode: number): Message {
  return { errorCode, name, isInternal: false, partitions: [], topicAuthorizedOperations: OPERATIONS_UNKNOWN };
}

async function topicMetadata(
  context: GatewayContext,
  name: string,
  create: boolean,
  session: Session,
): Promise<Message> {
  let count: number | undefined;
  try {
    count = await context.partitionCount(context.names.ledgerlineTopic(name), session.caller, create);
  } catch (error) {
    const code = kafkaErrorOf(error);
    return topicError(name, code === KafkaErrorCode.INVALID_REQUEST ? KafkaErrorCode.INVALID_TOPIC_EXCEPTION : code);
  }
  if (count === undefined) return topicError(name, KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  const { nodeId } = context.broker();
  // Every gateway can serve every partition, so each names itself the leader: a client's
  // partitions all go to the gateway it bootstrapped from.
  const partitions = Array.from({ length: kafkaPartitionCount(count) }, (_, partitionIndex) => ({
    errorCode: KafkaErrorCode.NONE,
    partitionIndex,
    leaderId: nodeId,
    leaderEpoch: 0,
    replicaNodes: [nodeId],
    isrNodes: [nodeId],
    offlineReplicas: [],
  }));
  return {
    errorCode: KafkaErrorCode.NONE,
    name,
    isInternal: false,
    partitions,
    topicAuthorizedOperations: OPERATIONS_UNKNOWN,
  };
}

async function allTopics(context: GatewayContext, session: Session): Promise<string[]> {
  let listed: string[];
  try {
    listed = await context.backend.listTopics(context.names.namespace, session.caller);
  } catch (error) {
    // No namespace yet (not created, or its creation still under way): it holds no topics. Failing the
    // request instead would close the connection, and a client asking for every topic would never get in.
    if (error instanceof LedgerlineError && error.code === 'NOT_FOUND') return [];
    throw error;
  }
  const names = new Set<string>();
  for (const topic of listed) {
    const kafkaName = context.names.kafkaTopicOf(topic);
    if (kafkaName !== undefined) names.add(kafkaName);
  }
  return [...names].sort();
}

/** Metadata v0-8: this gateway as the only broker, leader of every partition of the topics asked for (or all). */
export async function handleMetadata(
  context: GatewayContext,
  request: DecodedRequest,
  session: Session,
): Promise<Message> {
  const version = request.header.apiVersion;
  const asked = request.body['topics'] as { name: string }[] | null;
  const everything = asked === null || (version === 0 && asked.length === 0);
  const names = everything ? await allTopics(context, session) : asked.map((topic) => topic.name);
  const create = !everything && request.body['allowAutoTopicCreation'] === true;
  const topics = await Promise.all(names.map((name) => topicMetadata(context, name, create, session)));
  const broker = context.broker();
  return {
    throttleTimeMs: 0,
    brokers: [{ nodeId: broker.nodeId, host: broker.host, port: broker.port, rack: null }],
    clusterId: 'ledgerline',
    controllerId: broker.nodeId,
    topics,
    clusterAuthorizedOperations: OPERATIONS_UNKNOWN,
  };
}
