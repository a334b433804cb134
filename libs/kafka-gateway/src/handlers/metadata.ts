import { LedgerlineError } from '@ledgerline/errors';
import { backOff } from 'exponential-backoff';
import { KafkaErrorCode, type DecodedRequest, type Message } from '@ledgerline/kafka-protocol';
import type { GatewayContext } from '../gateway-context.js';
import { kafkaErrorOf } from '../kafka-errors.js';
import { NO_TOPIC_ID, type TopicSummary } from '../topic-summary.js';
import type { Session } from '../session.js';
import { kafkaPartitionCount } from '../topic-names.js';

/** Authorized operations are not computed (Kafka's "not requested" value). */
const OPERATIONS_UNKNOWN = -2147483648;
/** The cluster id Metadata (v2+) and DescribeCluster answer. */
const CLUSTER_ID = 'ledgerline';
/** Which gateway a leaving one names the controller: rendezvous hashing of this key over the others. */
const CONTROLLER_KEY = 'controller';
/** Waits between tries of a topic while the metadata service cannot be reached: from this, doubling up to the max. */
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 2_000;

function topicError(name: string | null, errorCode: number, topicId: Buffer = NO_TOPIC_ID): Message {
  return {
    errorCode,
    name,
    topicId,
    isInternal: false,
    partitions: [],
    topicAuthorizedOperations: OPERATIONS_UNKNOWN,
  };
}

/**
 * A topic's partition count and id, tried again for up to kafkaBackendTimeoutMs while
 * the metadata service cannot be reached (restarting, its channel
 * reconnecting). librdkafka fails every message queued for a topic whose
 * Metadata carries a topic-level error other than an unknown topic, so a
 * moment's outage answered at once would lose a producer's messages.
 */
function retrying<T>(context: GatewayContext, call: () => Promise<T>): Promise<T> {
  const deadlineMs = Date.now() + context.settings.kafkaBackendTimeoutMs;
  return backOff(call, {
    numOfAttempts: Number.MAX_SAFE_INTEGER,
    startingDelay: FIRST_RETRY_MS,
    maxDelay: MAX_RETRY_MS,
    retry: (error: unknown) => LedgerlineError.from(error).retryable && Date.now() < deadlineMs,
  });
}

/** The error a topic is answered with when finding it failed. */
function lookupError(error: unknown): number {
  // Still unreachable: Kafka's own answer for "not now, ask again", which Kafka clients retry.
  if (LedgerlineError.from(error).retryable) return KafkaErrorCode.LEADER_NOT_AVAILABLE;
  const code = kafkaErrorOf(error);
  return code === KafkaErrorCode.INVALID_REQUEST ? KafkaErrorCode.INVALID_TOPIC_EXCEPTION : code;
}

/**
 * A found topic's answer: every gateway can serve every partition, so each names itself the leader (a client's
 * partitions all go to the gateway it bootstrapped from); a gateway that is leaving names the others.
 */
function topicAnswer(context: GatewayContext, name: string, topic: TopicSummary): Message {
  // A client fetches by the id it is told here (Fetch v13+): by the name it asked for.
  context.topicIds.note(topic.topicId, name);
  const partitions = Array.from({ length: kafkaPartitionCount(topic.partitions) }, (_, partitionIndex) => {
    const { nodeId } = context.peers.leaderOf(`${name}-${partitionIndex}`);
    return {
      errorCode: KafkaErrorCode.NONE,
      partitionIndex,
      leaderId: nodeId,
      leaderEpoch: 0,
      replicaNodes: [nodeId],
      isrNodes: [nodeId],
      offlineReplicas: [],
    };
  });
  return {
    errorCode: KafkaErrorCode.NONE,
    name,
    topicId: topic.topicId,
    isInternal: false,
    partitions,
    topicAuthorizedOperations: OPERATIONS_UNKNOWN,
  };
}

async function topicMetadata(
  context: GatewayContext,
  name: string,
  create: boolean,
  session: Session,
): Promise<Message> {
  let topic: TopicSummary | undefined;
  try {
    const ledgerlineTopic = context.names.ledgerlineTopic(name);
    topic = await retrying(context, () => context.topic(ledgerlineTopic, session.caller, create));
  } catch (error) {
    return topicError(name, lookupError(error));
  }
  if (topic === undefined) return topicError(name, KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  return topicAnswer(context, name, topic);
}

/**
 * A topic asked for by id (v12): looked for in the gateway's Kafka namespace,
 * never created. An id no topic there has is UNKNOWN_TOPIC_ID, with a null name, as Kafka answers.
 */
async function topicMetadataById(context: GatewayContext, topicId: Buffer, session: Session): Promise<Message> {
  let topic: TopicSummary | undefined;
  try {
    topic = await retrying(context, () => context.backend.topicById(context.names.namespace, topicId, session.caller));
  } catch (error) {
    return topicError(null, lookupError(error), topicId);
  }
  if (topic === undefined) return topicError(null, KafkaErrorCode.UNKNOWN_TOPIC_ID, topicId);
  context.remember(topic.name, topic);
  return topicAnswer(context, context.names.kafkaTopicOf(topic.name) ?? topic.name, topic);
}

interface AskedTopic {
  topicId: Buffer;
  name: string | null;
}

function isNoTopicId(topicId: Buffer): boolean {
  return topicId.every((byte) => byte === 0);
}

/**
 * One topic of the request. By id from v12 (Kafka's v10 and v11 carry the
 * fields but no broker serves them: a topic without a name there is
 * INVALID_REQUEST, and an id beside a name is not looked at); by name otherwise.
 */
function askedTopic(context: GatewayContext, asked: AskedTopic, version: number, create: boolean, session: Session) {
  if (version >= 12 && !isNoTopicId(asked.topicId)) return topicMetadataById(context, asked.topicId, session);
  if (asked.name === null) {
    return Promise.resolve(topicError(version >= 12 ? null : '', KafkaErrorCode.INVALID_REQUEST, asked.topicId));
  }
  return topicMetadata(context, asked.name, create, session);
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

/**
 * Metadata v0-12: every live gateway as a broker, this one leader of every
 * partition of the topics asked for (or all), each with its topic id (v10+);
 * from v12 a topic may be asked for by id.
 */
export async function handleMetadata(
  context: GatewayContext,
  request: DecodedRequest,
  session: Session,
): Promise<Message> {
  const version = request.header.apiVersion;
  const asked = request.body['topics'] as AskedTopic[] | null;
  const everything = asked === null || (version === 0 && asked.length === 0);
  const create = !everything && request.body['allowAutoTopicCreation'] === true;
  const topics = everything
    ? await Promise.all((await allTopics(context, session)).map((name) => topicMetadata(context, name, false, session)))
    : await Promise.all(asked.map((topic) => askedTopic(context, topic, version, create, session)));
  return {
    throttleTimeMs: 0,
    // Every live gateway: a client reaches the coordinator FindCoordinator names by its broker id (kafkajs does).
    brokers: context.peers
      .brokers()
      .map((peer) => ({ nodeId: peer.nodeId, host: peer.host, port: peer.port, rack: null })),
    clusterId: CLUSTER_ID,
    controllerId: context.peers.leaderOf(CONTROLLER_KEY).nodeId,
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
    controllerId: context.peers.leaderOf(CONTROLLER_KEY).nodeId,
    brokers: context.peers
      .brokers()
      .map((peer) => ({ brokerId: peer.nodeId, host: peer.host, port: peer.port, rack: null })),
    clusterAuthorizedOperations: OPERATIONS_UNKNOWN,
  };
}
