import pMap from 'p-map';
import { LedgerlineError } from '@ledgerline/errors';
import {
  decodeConsumerSubscription,
  KafkaErrorCode,
  type DecodedRequest,
  type Message,
} from '@ledgerline/kafka-protocol';
import { checkSubscriptionName, OwnerReason } from '@ledgerline/ownership';
import type { GatewayContext } from '../gateway-context.js';
import type { ConsumerGroup } from '../group-state.js';
import { kafkaErrorOf } from '../kafka-errors.js';
import type { Session } from '../session.js';
import { commitKey, topicCommitKey } from './offsets.js';

/** Cursors read or deleted at once while a group's commits are looked for in the Kafka namespace. */
export const GROUP_SCAN_CONCURRENCY = 16;
/** The protocol type of Kafka's consumers: only their subscriptions can be read (ConsumerProtocol). */
const CONSUMER_PROTOCOL = 'consumer';
const PARTITION_SUFFIX = /^(.*)-partition-(\d+)$/;

/**
 * The Kafka error code of a failure that concerns a whole group (listing
 * where its commits are): a refused call is the group's authorization, one
 * that may succeed later the coordinator not being available, which Kafka's
 * admin clients retry.
 */
function groupErrorOf(error: unknown): number {
  const failure = LedgerlineError.from(error);
  if (failure.code === 'PERMISSION_DENIED' || failure.code === 'UNAUTHENTICATED') {
    return KafkaErrorCode.GROUP_AUTHORIZATION_FAILED;
  }
  if (failure.retryable) return KafkaErrorCode.COORDINATOR_NOT_AVAILABLE;
  return kafkaErrorOf(error);
}

function subscriptionBusy(error: unknown): boolean {
  return error instanceof LedgerlineError && error.reason === OwnerReason.SUBSCRIPTION_BUSY;
}

/**
 * The topics of the Kafka namespace (partitions and non-partitioned topics,
 * as the admin API lists them), read once per request however many groups
 * it names; a namespace that does not exist holds none.
 */
function namespaceTopics(context: GatewayContext, session: Session): () => Promise<string[]> {
  let listed: Promise<string[]> | undefined;
  return () => {
    listed ??= context.backend.listTopics(context.names.namespace, session.caller).catch((error: unknown) => {
      if (error instanceof LedgerlineError && error.code === 'NOT_FOUND') return [];
      throw error;
    });
    return listed;
  };
}

/**
 * The topics of the Kafka namespace on which the group has a commit: its
 * cursor there holds the committed-offset property. Commits are cursors
 * found by topic, with no index of a group's partitions, so every topic of
 * the namespace is asked (GROUP_SCAN_CONCURRENCY at a time); with `any`, the
 * search ends at the first one found.
 */
async function committedTopics(
  context: GatewayContext,
  groupId: string,
  topics: readonly string[],
  session: Session,
  any = false,
): Promise<string[]> {
  const found: string[] = [];
  const stop = new AbortController();
  await pMap(
    topics,
    async (topic) => {
      if (stop.signal.aborted) return;
      const committed = await context.backend.committedOffset(topic, groupId, session.caller);
      if (committed.offset < 0n) return;
      found.push(topic);
      if (any) stop.abort();
    },
    { concurrency: GROUP_SCAN_CONCURRENCY },
  );
  return found;
}

/** The commit order's key of a listed topic: a `-partition-i` topic is Kafka partition i of its topic, any other 0. */
function listedCommitKey(groupId: string, topic: string): string {
  const partition = PARTITION_SUFFIX.exec(topic);
  return partition === null
    ? topicCommitKey(groupId, topic, 0)
    : topicCommitKey(groupId, partition[1]!, Number(partition[2]));
}

/**
 * Deletes the group's commit on one partition's topic in its turn among the
 * group's commits of that partition (handlers/offsets.ts), so that a commit
 * and a deletion of one partition are applied one after the other.
 */
async function deleteInTurn(
  context: GatewayContext,
  key: string,
  topic: string,
  groupId: string,
  session: Session,
): Promise<boolean> {
  const turn = context.commitOrder.take(key);
  try {
    await turn.turn;
    return await context.backend.deleteCommit(topic, groupId, session.caller);
  } finally {
    turn.issued();
  }
}

/** Whether a group could have commits: its id names a subscription (OffsetCommit refuses every other). */
function mayHaveCommits(groupId: string): boolean {
  try {
    checkSubscriptionName(groupId);
    return true;
  } catch {
    return false;
  }
}

async function deleteGroup(
  context: GatewayContext,
  groupId: string,
  topics: () => Promise<string[]>,
  session: Session,
): Promise<number> {
  if (!context.coordinates(groupId)) return KafkaErrorCode.NOT_COORDINATOR;
  const known = context.groups.get(groupId);
  if (known !== undefined && known.members.size > 0) return KafkaErrorCode.NON_EMPTY_GROUP;
  let committed: string[] = [];
  try {
    if (mayHaveCommits(groupId)) committed = await committedTopics(context, groupId, await topics(), session);
  } catch (error) {
    return groupErrorOf(error);
  }
  if (committed.length === 0 && known === undefined) return KafkaErrorCode.GROUP_ID_NOT_FOUND;
  try {
    await pMap(committed, (topic) => deleteInTurn(context, listedCommitKey(groupId, topic), topic, groupId, session), {
      concurrency: GROUP_SCAN_CONCURRENCY,
    });
  } catch (error) {
    // Consumers of the Ledgerline SDK read the group's subscription: it is in use, as a group with members.
    return subscriptionBusy(error) ? KafkaErrorCode.NON_EMPTY_GROUP : groupErrorOf(error);
  }
  context.groups.forget(groupId);
  return KafkaErrorCode.NONE;
}

/**
 * DeleteGroups v0-2: deletes each group's committed offsets, which are the
 * cursors named by the group on the partitions' topics, found by asking
 * every topic of the Kafka namespace (listing it needs the namespace's admin,
 * as Kafka's DELETE on a group is an admin's right). Answered as Kafka's
 * coordinator answers: NOT_COORDINATOR on any gateway but the group's,
 * NON_EMPTY_GROUP while it has members (or SDK consumers read its
 * subscription), GROUP_ID_NOT_FOUND when it has neither members nor
 * commits. A group named twice gets one answer.
 */
export async function handleDeleteGroups(
  context: GatewayContext,
  request: DecodedRequest,
  session: Session,
): Promise<Message> {
  const topics = namespaceTopics(context, session);
  const groups = [...new Set(request.body['groupsNames'] as string[])];
  const results = await Promise.all(
    groups.map(async (groupId) => ({ groupId, errorCode: await deleteGroup(context, groupId, topics, session) })),
  );
  return { throttleTimeMs: 0, results };
}

/**
 * The Ledgerline topics the members of a consumer group subscribe to (from
 * their ConsumerProtocol subscriptions in the protocol chosen), or undefined
 * when one of them cannot be read: Kafka then takes the group as subscribed
 * to every topic.
 */
function subscribedTopics(context: GatewayContext, group: ConsumerGroup): Set<string> | undefined {
  const topics = new Set<string>();
  for (const member of group.members.values()) {
    const metadata = member.protocols.find((protocol) => protocol.name === group.protocolName)?.metadata;
    const subscribed = metadata === undefined ? undefined : decodeConsumerSubscription(metadata);
    if (subscribed === undefined) return undefined;
    for (const name of subscribed) {
      try {
        topics.add(context.names.ledgerlineTopic(name));
      } catch {
        // A name no topic can have: no partition asked for is of it.
      }
    }
  }
  return topics;
}

type OffsetDeleteTopic = { name: string; partitions: { partitionIndex: number }[] };
/** One partition asked for: its Ledgerline topic, or the error it is answered with. */
type Asked = { topic: string; partition: number; resolved: Promise<string | number> };

function groupRefusal(errorCode: number): Message {
  return { errorCode, throttleTimeMs: 0, topics: [] };
}

/** Whether the group has a commit among the partitions asked for, or anywhere in the Kafka namespace. */
async function hasCommits(
  context: GatewayContext,
  groupId: string,
  asked: readonly Asked[],
  session: Session,
): Promise<boolean> {
  if (!mayHaveCommits(groupId)) return false;
  for (const partition of asked) {
    const topic = await partition.resolved;
    if (typeof topic !== 'string') continue;
    if ((await context.backend.committedOffset(topic, groupId, session.caller)).offset >= 0n) return true;
  }
  const topics = await namespaceTopics(context, session)();
  return (await committedTopics(context, groupId, topics, session, true)).length > 0;
}

/**
 * OffsetDelete v0: deletes the group's committed offsets of the partitions
 * asked for, as Kafka's coordinator does: an empty group loses them all; a
 * consumer group with members keeps those of the topics a member subscribes
 * to (GROUP_SUBSCRIBED_TO_TOPIC) and loses the others; a group of another
 * protocol with members is NON_EMPTY_GROUP. A group with neither members nor
 * commits is GROUP_ID_NOT_FOUND; an unknown topic or partition
 * UNKNOWN_TOPIC_OR_PARTITION. A partition without a commit is answered NONE.
 */
export async function handleOffsetDelete(
  context: GatewayContext,
  request: DecodedRequest,
  session: Session,
): Promise<Message> {
  const groupId = request.body['groupId'] as string;
  const topics = request.body['topics'] as OffsetDeleteTopic[];
  if (groupId === '') return groupRefusal(KafkaErrorCode.INVALID_GROUP_ID);
  if (!context.coordinates(groupId)) return groupRefusal(KafkaErrorCode.NOT_COORDINATOR);
  const group = context.groups.get(groupId);
  const live = group !== undefined && group.members.size > 0;
  if (live && group.protocolType !== CONSUMER_PROTOCOL) return groupRefusal(KafkaErrorCode.NON_EMPTY_GROUP);
  const subscribed = live ? subscribedTopics(context, group) : new Set<string>();
  const asked: Asked[] = topics.flatMap((topic) =>
    topic.partitions.map(({ partitionIndex }) => ({
      topic: topic.name,
      partition: partitionIndex,
      resolved: context.resolvePartition(topic.name, partitionIndex, session.caller).catch((error: unknown) => {
        const code = kafkaErrorOf(error);
        // A name no topic can have names no topic (Kafka's metadata has no such partition).
        return code === KafkaErrorCode.INVALID_REQUEST ? KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION : code;
      }),
    })),
  );
  if (group === undefined) {
    try {
      if (!(await hasCommits(context, groupId, asked, session))) return groupRefusal(KafkaErrorCode.GROUP_ID_NOT_FOUND);
    } catch (error) {
      return groupRefusal(groupErrorOf(error));
    }
  }
  const answers = await Promise.all(
    asked.map(async ({ topic, partition, resolved }): Promise<number> => {
      const known = await resolved;
      if (typeof known === 'number') return known;
      if (subscribed === undefined || subscribed.has(context.names.ledgerlineTopic(topic))) {
        return KafkaErrorCode.GROUP_SUBSCRIBED_TO_TOPIC;
      }
      try {
        await deleteInTurn(context, commitKey(context, groupId, topic, partition), known, groupId, session);
        return KafkaErrorCode.NONE;
      } catch (error) {
        return subscriptionBusy(error) ? KafkaErrorCode.GROUP_SUBSCRIBED_TO_TOPIC : kafkaErrorOf(error);
      }
    }),
  );
  const byTopic = new Map<string, { partitionIndex: number; errorCode: number }[]>();
  asked.forEach(({ topic, partition }, index) => {
    const partitions = byTopic.get(topic) ?? [];
    partitions.push({ partitionIndex: partition, errorCode: answers[index]! });
    byTopic.set(topic, partitions);
  });
  return {
    errorCode: KafkaErrorCode.NONE,
    throttleTimeMs: 0,
    topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })),
  };
}
