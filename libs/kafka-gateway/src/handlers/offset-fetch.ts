import pMap from 'p-map';
import { LedgerlineError } from '@ledgerline/errors';
import { partitionIndexOf } from '@ledgerline/naming';
import {
  decodeConsumerAssignment,
  KafkaErrorCode,
  type DecodedRequest,
  type Message,
} from '@ledgerline/kafka-protocol';
import type { GatewayContext } from '../gateway-context.js';
import { kafkaErrorOf } from '../kafka-errors.js';
import type { Session } from '../session.js';
import { GROUP_SCAN_CONCURRENCY, groupCommitTopics, namespaceTopics, readGroupIndex } from './group-commits.js';

type AskedTopic = { name: string; partitionIndexes: number[] };
/** The partitions of `byTopic` as OffsetFetch names them, each topic's in order. */
function askedOf(byTopic: Map<string, Set<number>>): AskedTopic[] {
  return [...byTopic].map(([name, partitions]) => ({ name, partitionIndexes: [...partitions].sort((a, b) => a - b) }));
}

function add(byTopic: Map<string, Set<number>>, topic: string, partition: number): void {
  const known = byTopic.get(topic) ?? new Set<number>();
  known.add(partition);
  byTopic.set(topic, known);
}

/**
 * The partitions the group's members are assigned, read from their
 * ConsumerProtocol assignments: where commits outside the Kafka namespace
 * (topics named `tenant/namespace/topic`, indexed in their own namespaces)
 * are looked for.
 */
function assignedToGroup(context: GatewayContext, groupId: string, byTopic: Map<string, Set<number>>): void {
  const group = context.coordinates(groupId) ? context.groups.get(groupId) : undefined;
  for (const member of group?.members.values() ?? []) {
    for (const { topic, partitions } of decodeConsumerAssignment(member.assignment)) {
      for (const partition of partitions) add(byTopic, topic, partition);
    }
  }
}

function refused(error: unknown): boolean {
  return error instanceof LedgerlineError && (error.code === 'PERMISSION_DENIED' || error.code === 'UNAUTHENTICATED');
}

/**
 * The partition topics of the Kafka namespace where the group may hold a
 * commit: its index's entries, whether or not the group has members. An
 * index that cannot say all (partial: the group may have committed before
 * the index existed; unindexed: past its bound) adds what a scan of the
 * namespace's topics finds, when the caller may list them (the namespace's
 * admin); otherwise the index's entries and the members' assignments are
 * what is answered. A read never writes the index: OffsetDelete and
 * DeleteGroups mark a partial one complete.
 */
async function indexedTopics(context: GatewayContext, groupId: string, session: Session): Promise<string[]> {
  const index = await readGroupIndex(context, groupId, session);
  try {
    return await groupCommitTopics(context, groupId, index, namespaceTopics(context, session), session);
  } catch (error) {
    if (refused(error)) return index.topics;
    throw error;
  }
}

/** Every partition an OffsetFetch for all topics (null, v2+) looks at: the index's, then the members' assignments. */
async function committedByGroup(context: GatewayContext, groupId: string, session: Session): Promise<AskedTopic[]> {
  const byTopic = new Map<string, Set<number>>();
  for (const topic of await indexedTopics(context, groupId, session)) {
    const kafkaTopic = context.names.kafkaTopicOf(topic);
    if (kafkaTopic === undefined) continue;
    // A non-partitioned topic is Kafka's partition 0.
    add(byTopic, kafkaTopic, Math.max(0, partitionIndexOf(topic)));
  }
  assignedToGroup(context, groupId, byTopic);
  return askedOf(byTopic);
}

async function fetchPartition(
  context: GatewayContext,
  groupId: string,
  kafkaTopic: string,
  partitionIndex: number,
  session: Session,
): Promise<Message> {
  try {
    const ledgerlineTopic = await context.resolvePartition(kafkaTopic, partitionIndex, session.caller);
    const committed = await context.backend.committedOffset(ledgerlineTopic, groupId, session.caller);
    const answer = { committedOffset: committed.offset, metadata: committed.metadata, errorCode: KafkaErrorCode.NONE };
    return { partitionIndex, committedLeaderEpoch: -1, ...answer };
  } catch (error) {
    const answer = { committedOffset: -1n, metadata: '', errorCode: kafkaErrorOf(error) };
    return { partitionIndex, committedLeaderEpoch: -1, ...answer };
  }
}

/**
 * OffsetFetch v1-5: the offsets a group committed (-1 where it has none) with
 * their commits' metadata. All topics (null, v2+) lists every partition the
 * group's index of committed partitions names that still holds a commit (so
 * an empty group lists what it committed, as on Kafka), with those its
 * members are assigned; an index the caller may not read is
 * GROUP_AUTHORIZATION_FAILED for the request.
 */
export async function handleOffsetFetch(
  context: GatewayContext,
  request: DecodedRequest,
  session: Session,
): Promise<Message> {
  const groupId = request.body['groupId'] as string;
  const named = request.body['topics'] as AskedTopic[] | null;
  let asked: AskedTopic[];
  try {
    asked = named ?? (await committedByGroup(context, groupId, session));
  } catch (error) {
    const errorCode = refused(error) ? KafkaErrorCode.GROUP_AUTHORIZATION_FAILED : kafkaErrorOf(error);
    return { throttleTimeMs: 0, topics: [], errorCode };
  }
  // A group's index may name thousands of partitions: their cursor reads go as the scan's do, a bounded number at once.
  const partitions = asked.flatMap((topic) => topic.partitionIndexes.map((index) => ({ name: topic.name, index })));
  const fetched = await pMap(
    partitions,
    (partition) => fetchPartition(context, groupId, partition.name, partition.index, session),
    { concurrency: GROUP_SCAN_CONCURRENCY },
  );
  let next = 0;
  const answered = asked.map((topic) => ({
    name: topic.name,
    partitions: topic.partitionIndexes.map(() => fetched[next++]!),
  }));
  // Asked for all, Kafka answers only the partitions the group committed.
  const topics =
    named !== null
      ? answered
      : answered
          .map((topic) => ({
            ...topic,
            partitions: topic.partitions.filter((each) => (each['committedOffset'] as bigint) >= 0n),
          }))
          .filter((topic) => topic.partitions.length > 0);
  return { throttleTimeMs: 0, topics, errorCode: KafkaErrorCode.NONE };
}
