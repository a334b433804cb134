import { LedgerlineError } from '@ledgerline/errors';
import { backOff } from 'exponential-backoff';
import { KafkaErrorCode, type DecodedRequest, type Message } from '@ledgerline/kafka-protocol';
import type { GatewayContext } from '../gateway-context.js';
import { kafkaErrorOf } from '../kafka-errors.js';
import type { Session } from '../session.js';
import { kafkaPartitionCount } from '../topic-names.js';

/** Authorized operations are not computed (Kafka's "not requested" value). */
const OPERATIONS_UNKNOWN = -2147483648;
/** The cluster id Metadata (v2+) and DescribeCluster answer. */
const CLUSTER_ID = 'ledgerline';
/** Waits between tries of a topic while the metadata service cannot be reached: from this, doubling up to the max. */
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 2_000;

function topicError(name: string, errorCode: number): Message {
  return { errorCode, name, isInternal: false, partitions: [], topicAuthorizedOperations: OPERATIONS_UNKNOWN };
}

/**
 * A topic's partition count, tried again for up to kafkaBackendTimeoutMs while
 * the metadata service cannot be reached (restarting, its channel
 * reconnecting). librdkafka fails every message queued for a topic whose
 * Metadata carries a topic-level error other than an unknown topic, so a
 * moment's outage answered at once would lose a producer's messages.
 */
function partitionCountRetrying(
  context: GatewayContext,
  topic: string,
  create: boolean,
  session: Session,
): Promise<number | undefined> {
  const deadlineMs = Date.now() + context.settings.kafkaBackendTimeoutMs;
  return backOff(() => context.partitionCount(topic, session.caller, create), {
    numOfAttempts: Number.MAX_SAFE_INTEGER,
    startingDelay: FIRST_RETRY_MS,
    maxDelay: MAX_RETRY_MS,
    retry: (error: unknown) => LedgerlineError.from(error).retryable && Date.now() < deadlineMs,
  });
}

async function topicMetadata(
  context: GatewayContext,
  name: string,
  create: boolean,
  session: Session,
): Promise<Message> {
  let count: number | undefined;
  try {
    count = await partitionCountRetrying(context, context.names.ledgerlineTopic(name), create, session);
  } catch (error) {
    // Still unreachable: Kafka's own answer for "not now, ask again", which Kafka clients retry.
    if (LedgerlineError.from(error).retryable) return topicError(name, KafkaErrorCode.LEADER_NOT_AVAILABLE);
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

/** Metadata v0-8: every live gateway as a broker, this one leader of every partition of the topics asked for (or all). */
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
    // Every live gateway: a client reaches the coordinator FindCoordinator names by its broker id (kafkajs does).
    brokers: context.peers
      .brokers()
      .map((peer) => ({ nodeId: peer.nodeId, host: peer.host, port: peer.port, rack: null })),
    clusterId: CLUSTER_ID,
    controllerId: broker.nodeId,
    topics,
    clusterAuthorizedOperations: OPERATIONS_UNKNOWN,
  };
}

/**
 * DescribeCluster v0: the brokers Metadata answers (every live gateway), this
 * gateway as the controller, as Metadata names it, and the cluster id
 * Metadata answers. Authorized operations are not computed (Kafka's "not
 * requested" value), as in Metadata.
 */
export async function handleDescribeCluster(context: GatewayContext): Promise<Message> {
  return {
    throttleTimeMs: 0,
    errorCode: KafkaErrorCode.NONE,
    errorMessage: null,
    clusterId: CLUSTER_ID,
    controllerId: context.broker().nodeId,
    brokers: context.peers
      .brokers()
      .map((peer) => ({ brokerId: peer.nodeId, host: peer.host, port: peer.port, rack: null })),
    clusterAuthorizedOperations: OPERATIONS_UNKNOWN,
  };
}
