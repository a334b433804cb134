import pMap from 'p-map';
import { LedgerlineError } from '@ledgerline/errors';
import {
  decodeConsumerSubscription,
  KafkaErrorCode,
  type DecodedRequest,
  type Message,
} from '@ledgerline/kafka-protocol';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';
import { checkSubscriptionName, OwnerReason } from '@ledgerline/ownership';
import type { GatewayContext } from '../gateway-context.js';
import type { ConsumerGroup } from '../group-state.js';
import { kafkaErrorOf } from '../kafka-errors.js';
import type { Session } from '../session.js';
import {
  deleteInTurn,
  GROUP_SCAN_CONCURRENCY,
  groupCommitTopics,
  hasCommit,
  listedCommitKey,
  namespaceTopics,
  readGroupIndex,
  scanCommittedTopics,
} from './group-commits.js';
import { commitKey } from './offsets.js';

/** The protocol type of Kafka's consumers: only their subscriptions can be read (ConsumerProtocol). */
const CONSUMER_PROTOCOL = 'consumer';
/** Rounds of one group's deletion while commits keep changing its index (each deletes what the last left). */
const MAX_DELETE_ROUNDS = 4;

/**
 * The Kafka error code of a failure that concerns a whole group (reading its
 * index, listing where its commits are): a refused call is the group's
 * authorization, one that may succeed later the coordinator not being
 * available, which Kafka's admin clients retry.
 */
function groupErrorOf(error: unknown): number {
  const failure = LedgerlineError.from(error);
  if (failure.code === 'PERMISSION_DENIED' || failure.code === 'UNAUTHENTICATED') {
    return KafkaErrorCode.GROUP_AUTHORIZATION_FAILED;
  }
  if (failure.retryable || failure.reason === MetadataServiceReason.KAFKA_GROUP_INDEX_CHANGED) {
    return KafkaErrorCode.COORDINATOR_NOT_AVAILABLE;
  }
  return kafkaErrorOf(error);
}

function subscriptionBusy(error: unknown): boolean {
  return error instanceof LedgerlineError && error.reason === OwnerReason.SUBSCRIPTION_BUSY;
}

function indexChanged(error: unknown): boolean {
  return error instanceof LedgerlineError && error.reason === MetadataServiceReason.KAFKA_GROUP_INDEX_CHANGED;
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

/**
 * One round of a group's deletion: its commits where its index (and, when
 * the index cannot say all, a scan) finds them, each entry removed in its
 * commit's turn; then the index itself, by compare-and-set on the version
 * read after. 'again' when a commit changed the index meanwhile.
 */
async function deleteRound(
  context: GatewayContext,
  groupId: string,
  topics: () => Promise<string[]>,
  session: Session,
): Promise<{ deleted: boolean; done: boolean }> {
  const index = await readGroupIndex(context, groupId, session);
  const indexed = new Set(index.topics);
  const found = await groupCommitTopics(context, groupId, index, topics, session);
  const deleted = await pMap(
    found,
    (topic) =>
      deleteInTurn(
        context,
        listedCommitKey(groupId, topic),
        topic,
        groupId,
        session,
        indexed.has(topic) ? 'always' : 'never',
      ),
    { concurrency: GROUP_SCAN_CONCURRENCY },
  );
  const after = index.version === 0 ? index : await readGroupIndex(context, groupId, session);
  // A commit indexed since the first read: delete it too (a commit that came after the deletion began may go).
  if (after.topics.length > 0) return { deleted: deleted.includes(true), done: false };
  if (after.version > 0) {
    try {
      await context.groupIndex.records.remove(context.names.namespace, groupId, after.version, session.caller);
    } catch (error) {
      if (indexChanged(error)) return { deleted: deleted.includes(true), done: false };
      throw error;
    }
  }
  return { deleted: deleted.includes(true), done: true };
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
  let deleted = false;
  if (mayHaveCommits(groupId)) {
    let done = false;
    try {
      for (let round = 0; round < MAX_DELETE_ROUNDS && !done; round++) {
        const outcome = await deleteRound(context, groupId, topics, session);
        deleted ||= outcome.deleted;
        done = outcome.done;
      }
    } catch (error) {
      // Consumers of the Ledgerline SDK read the group's subscription: it is in use, as a group with members.
      return subscriptionBusy(error) ? KafkaErrorCode.NON_EMPTY_GROUP : groupErrorOf(error);
    } finally {
      context.groupIndex.forgetGroup(context.names.namespace, groupId);
    }
    if (!done) return KafkaErrorCode.COORDINATOR_NOT_AVAILABLE;
  }
  if (!deleted && known === undefined) return KafkaErrorCode.GROUP_ID_NOT_FOUND;
  context.groups.forget(groupId);
  return KafkaErrorCode.NONE;
}

/**
 * DeleteGroups v0-2: deletes each group's committed offsets, which are the
 * cursors named by the group on the partitions' topics, found through the
 * group's index in the Kafka namespace (reading it needs consume there, as
 * deleting the commits does); a group whose index cannot say all (it
 * committed before the index existed, or past its bound) is also looked for
 * on every topic of the namespace, which listing needs the namespace's admin
 * for. The group's index goes with its commits. Answered as Kafka's
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

/**
 * Whether the group has a commit among the partitions asked for, or anywhere
 * in the Kafka namespace: on a partition its index names, or, when the index
 * cannot say all, on a topic one scan finds. A group that committed before
 * the index existed has what that last scan found indexed, and its index
 * marked complete, so it is never scanned again.
 */
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
    if (await hasCommit(context, topic, groupId, session)) return true;
  }
  const index = await readGroupIndex(context, groupId, session);
  for (const topic of index.topics) if (await hasCommit(context, topic, groupId, session)) return true;
  if (index.state === 'complete') return false;
  const topics = await namespaceTopics(context, session)();
  if (index.state === 'unindexed')
    return (await scanCommittedTopics(context, groupId, topics, session, true)).length > 0;
  const found = await scanCommittedTopics(context, groupId, topics, session);
  for (const topic of found) await context.groupIndex.indexed(topic, groupId, session.caller);
  if (found.length > 0 || index.version > 0) {
    await context.groupIndex.records.update(context.names.namespace, groupId, [], true, session.caller);
  }
  return found.length > 0;
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
        await deleteInTurn(context, commitKey(context, groupId, topic, partition), known, groupId, session, 'deleted');
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
