import pMap from 'p-map';
import { LedgerlineError } from '@ledgerline/errors';
import type { GatewayContext } from '../gateway-context.js';
import { namespaceOf, type GroupIndexRead } from '../group-index.js';
import type { Session } from '../session.js';
import { topicCommitKey } from './offsets.js';

/** Cursors read or deleted at once while a group's commits are looked for in the Kafka namespace. */
export const GROUP_SCAN_CONCURRENCY = 16;
const PARTITION_SUFFIX = /^(.*)-partition-(\d+)$/;

function isNotFound(error: unknown): boolean {
  return error instanceof LedgerlineError && error.code === 'NOT_FOUND';
}

/**
 * The topics of the Kafka namespace (partitions and non-partitioned topics,
 * as the admin API lists them), read at most once per request however many
 * groups it names; a namespace that does not exist holds none.
 */
export function namespaceTopics(context: GatewayContext, session: Session): () => Promise<string[]> {
  let listed: Promise<string[]> | undefined;
  return () => {
    listed ??= context.backend.listTopics(context.names.namespace, session.caller).catch((error: unknown) => {
      if (isNotFound(error)) return [];
      throw error;
    });
    return listed;
  };
}

/** Whether the group committed on `topic`; a topic (or namespace) gone since it was indexed holds nothing. */
export async function hasCommit(
  context: GatewayContext,
  topic: string,
  groupId: string,
  session: Session,
): Promise<boolean> {
  try {
    return (await context.backend.committedOffset(topic, groupId, session.caller)).offset >= 0n;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

/**
 * The topics of the Kafka namespace on which the group has a commit, found
 * by asking every one of them (GROUP_SCAN_CONCURRENCY at a time): what the
 * index does not say. With `any`, the search ends at the first one found.
 */
export async function scanCommittedTopics(
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
      if (!(await hasCommit(context, topic, groupId, session))) return;
      found.push(topic);
      if (any) stop.abort();
    },
    { concurrency: GROUP_SCAN_CONCURRENCY },
  );
  return found;
}

/** The group's index in the Kafka namespace; a namespace that does not exist holds no commit. */
export async function readGroupIndex(
  context: GatewayContext,
  groupId: string,
  session: Session,
): Promise<GroupIndexRead> {
  try {
    return await context.groupIndex.records.read(context.names.namespace, groupId, session.caller);
  } catch (error) {
    if (isNotFound(error)) return { state: 'complete', topics: [], version: 0 };
    throw error;
  }
}

/**
 * Where the group's commits in the Kafka namespace may be: its index's
 * entries, and when the index cannot say all (a group that committed before
 * it existed, or one past its bound) what a scan of every topic finds.
 */
export async function groupCommitTopics(
  context: GatewayContext,
  groupId: string,
  index: GroupIndexRead,
  listTopics: () => Promise<string[]>,
  session: Session,
): Promise<string[]> {
  if (index.state === 'complete') return index.topics;
  const scanned = await scanCommittedTopics(context, groupId, await listTopics(), session);
  return [...new Set([...index.topics, ...scanned])];
}

/** The commit order's key of a listed topic: a `-partition-i` topic is Kafka partition i of its topic, any other 0. */
export function listedCommitKey(groupId: string, topic: string): string {
  const partition = PARTITION_SUFFIX.exec(topic);
  return partition === null
    ? topicCommitKey(groupId, topic, 0)
    : topicCommitKey(groupId, partition[1]!, Number(partition[2]));
}

/**
 * Deletes the group's commit on one partition's topic in its turn among the
 * group's commits of that partition (handlers/offsets.ts), so that a commit
 * and a deletion of one partition are applied one after the other; then,
 * still in that turn, what this gateway remembers of its index entry, and
 * the entry itself as `removeEntry` says (`always`: the group is being
 * deleted, and a later commit must find no entry; `deleted`: when a commit
 * was), so the next commit there is indexed again. True when a commit was
 * deleted; a topic gone meanwhile held none.
 */
export async function deleteInTurn(
  context: GatewayContext,
  key: string,
  topic: string,
  groupId: string,
  session: Session,
  removeEntry: 'always' | 'deleted' | 'never',
): Promise<boolean> {
  const turn = context.commitOrder.take(key);
  try {
    await turn.turn;
    let deleted: boolean;
    try {
      deleted = await context.backend.deleteCommit(topic, groupId, session.caller);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      deleted = false;
    }
    context.groupIndex.forgetPartition(topic, groupId);
    if (removeEntry === 'always' || (removeEntry === 'deleted' && deleted)) {
      await context.groupIndex.records.update(namespaceOf(topic), groupId, [topic], false, session.caller);
    }
    return deleted;
  } finally {
    turn.issued();
  }
}
