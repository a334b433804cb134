import pMap from 'p-map';
import { ErrorReason, invalidArgument, LedgerlineError } from '@ledgerline/errors';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';
import { MAX_PATH_BYTES } from '@ledgerline/metadata-store';
import { decodeLocalName, type NamespaceName, type TopicName } from '@ledgerline/naming';
import type { AdminContext } from '../admin-context.js';
import { KAFKA_GROUP_INDEX_CONCURRENCY, MAX_KAFKA_GROUP_INDEX_ENTRIES } from '../limits.js';
import { isBadVersion, retryOnConflict } from '../records/cas-retry.js';
import { kafkaGroupEntryPath, kafkaGroupPath, kafkaGroupsDir } from '../records/layout.js';
import { KafkaGroupIndexRecordSchema, type KafkaGroupIndexRecord } from '../records/records.js';
import {
  forEachChildPage,
  listChildren,
  readRecord,
  writeRecord,
  type VersionedRecord,
} from '../records/store-records.js';
import { parseNamespace, readNamespace } from './namespaces.js';
import { parseTopic } from './topic-scope.js';

/**
 * The Kafka gateway's index of a consumer group's committed partitions
 * (libs/kafka-gateway/README.md): a record per group and namespace at
 * `/kafka/groups/<tenant>/<ns>/<group>`, one child per partition topic the
 * group committed on, written by the gateway before each commit's cursor
 * update, so deleting a group reads its partitions rather than every topic.
 *
 * A record starts `complete` in a namespace created since the index exists
 * (the namespace record's kafkaGroupsIndexed), `partial` in an older one,
 * whose groups may hold commits made before; the gateway finds those by one
 * last scan and then marks the record complete. A group whose index would
 * pass its bound is marked `unindexed` and found by scanning from then on.
 * The record's `entries` is raised before a child is written and lowered
 * after one is removed, so it is never below the children's count: the bound
 * holds whatever crashes in between, and a count left high only brings the
 * mark sooner.
 */

export type KafkaGroupIndexState = KafkaGroupIndexRecord['state'];

export interface KafkaGroupIndex {
  state: KafkaGroupIndexState;
  /** The partition topics indexed (full names), in name order. */
  topics: string[];
  /** The record's version; 0 when the group has none. */
  version: number;
}

/** INVALID_ARGUMENT / INVALID_KAFKA_GROUP unless `group` can name an index record of `namespace` with any topic of it. */
function checkGroup(namespace: NamespaceName, group: unknown, topic?: TopicName): string {
  if (typeof group !== 'string' || group === '' || group === '.' || group === '..') {
    throw invalidArgument(
      MetadataServiceReason.INVALID_KAFKA_GROUP,
      `a Kafka group id must be a non-empty string other than '.' and '..'`,
    );
  }
  let path: string;
  try {
    path = topic === undefined ? kafkaGroupPath(namespace, group) : kafkaGroupEntryPath(namespace, group, topic);
  } catch (error) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_KAFKA_GROUP,
      `Kafka group id ${JSON.stringify(group.slice(0, 64))} cannot be stored: ${LedgerlineError.from(error).message}`,
    );
  }
  if (Buffer.byteLength(path, 'utf8') > MAX_PATH_BYTES) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_KAFKA_GROUP,
      `the index path of Kafka group ${JSON.stringify(group.slice(0, 64))}... would be longer than ${MAX_PATH_BYTES} bytes; use a shorter group id or topic name`,
    );
  }
  return group;
}

/** A partition topic of `namespace` (remove_topics name only the namespace's own). */
function topicOf(namespace: NamespaceName, name: string): TopicName {
  const topic = parseTopic(name);
  if (topic.namespaceName.toString() !== namespace.toString()) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_KAFKA_GROUP,
      `topic ${topic.toString()} is not of namespace ${namespace.toString()}, whose group index was named`,
    );
  }
  return topic;
}

function checkMaxPartitions(max: number): number {
  if (max === 0) return MAX_KAFKA_GROUP_INDEX_ENTRIES;
  if (!Number.isInteger(max) || max < 1 || max > MAX_KAFKA_GROUP_INDEX_ENTRIES) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_KAFKA_GROUP,
      `max_partitions must be 1 to ${MAX_KAFKA_GROUP_INDEX_ENTRIES} (0: ${MAX_KAFKA_GROUP_INDEX_ENTRIES}); got ${max}`,
    );
  }
  return max;
}

/** The state a group without a record has: none of its commits predate the index in a namespace created since. */
async function stateWithoutRecord(context: AdminContext, namespace: NamespaceName): Promise<KafkaGroupIndexState> {
  const found = await readNamespace(context, namespace);
  return found.record.kafkaGroupsIndexed === true ? 'complete' : 'partial';
}

/**
 * Adds `topicName` to its group's index in the topic's namespace, unless it is
 * there or the group is unindexed; a group whose index holds `maxPartitions`
 * entries is marked unindexed instead. Answers the index's state after.
 */
export async function addKafkaGroupPartition(
  context: AdminContext,
  topicName: string,
  groupId: string,
  maxPartitions: number,
): Promise<KafkaGroupIndexState> {
  const topic = parseTopic(topicName);
  const namespace = topic.namespaceName;
  const group = checkGroup(namespace, groupId, topic);
  const max = checkMaxPartitions(maxPartitions);
  const recordPath = kafkaGroupPath(namespace, group);
  const entryPath = kafkaGroupEntryPath(namespace, group, topic);
  let counted = false;
  return retryOnConflict(`indexing Kafka group ${group} on ${topic.toString()}`, async () => {
    const found = await readOrCreate(context, namespace, recordPath);
    const { state, entries } = found.record;
    if (state === 'unindexed') return state;
    // An entry counted on an earlier attempt is counted again under a record written anew (the first was deleted).
    if (!counted) {
      if ((await context.store.get(entryPath)) !== undefined) return state;
      if (entries >= max) {
        await writeRecord(context.store, recordPath, { state: 'unindexed', entries }, found.version);
        return 'unindexed';
      }
    }
    // Counted first, written after: a crash between leaves the count high, never the children past it.
    await writeRecord(context.store, recordPath, { state, entries: entries + 1 }, found.version);
    counted = true;
    await context.store.put(entryPath, EMPTY);
    // A group deletion that read the record before this entry was written may have removed the record since:
    // the entry then needs a record again, or the group would read as having no commits.
    if ((await context.store.get(recordPath)) === undefined) throw readAgain();
    return state;
  });
}

const EMPTY = new Uint8Array(0);

async function readOrCreate(
  context: AdminContext,
  namespace: NamespaceName,
  recordPath: string,
): Promise<VersionedRecord<KafkaGroupIndexRecord>> {
  const found = await readRecord(context.store, recordPath, KafkaGroupIndexRecordSchema);
  if (found !== undefined) return found;
  const record: KafkaGroupIndexRecord = { state: await stateWithoutRecord(context, namespace), entries: 0 };
  await writeRecord(context.store, recordPath, record, 'absent');
  throw readAgain();
}

/** Makes retryOnConflict run its step again, reading the record anew. */
function readAgain(): LedgerlineError {
  return new LedgerlineError('ABORTED', ErrorReason.BAD_VERSION, 'the Kafka group index record changed: read it again');
}

/** The group's index in `namespaceName`: its state, entries and version. */
export async function getKafkaGroupIndex(
  context: AdminContext,
  namespaceName: string,
  groupId: string,
): Promise<KafkaGroupIndex> {
  const namespace = parseNamespace(namespaceName);
  const group = checkGroup(namespace, groupId);
  const recordPath = kafkaGroupPath(namespace, group);
  const found = await readRecord(context.store, recordPath, KafkaGroupIndexRecordSchema);
  if (found === undefined) return { state: await stateWithoutRecord(context, namespace), topics: [], version: 0 };
  const children = await listChildren(context.store, recordPath, MAX_KAFKA_GROUP_INDEX_ENTRIES);
  // Only racing adds put an index past its bound: it is read as unindexed, and scanned.
  const state = children.truncated ? 'unindexed' : found.record.state;
  const prefix = `persistent://${namespace.toString()}/`;
  return { state, topics: children.names.map((name) => prefix + decodeLocalName(name)), version: found.version };
}

/**
 * Removes entries of the group's index (their commits are deleted) and, with
 * `markComplete`, records that every commit of the group is indexed. A group
 * without a record gets none; an unindexed one stays unindexed.
 */
export async function updateKafkaGroupIndex(
  context: AdminContext,
  namespaceName: string,
  groupId: string,
  removeTopics: readonly string[],
  markComplete: boolean,
): Promise<KafkaGroupIndexState | undefined> {
  const namespace = parseNamespace(namespaceName);
  const group = checkGroup(namespace, groupId);
  if (removeTopics.length > MAX_KAFKA_GROUP_INDEX_ENTRIES) {
    throw invalidArgument(
      MetadataServiceReason.BATCH_TOO_LARGE,
      `at most ${MAX_KAFKA_GROUP_INDEX_ENTRIES} entries may be removed at once; got ${removeTopics.length}`,
    );
  }
  const entries = [
    ...new Set(removeTopics.map((name) => kafkaGroupEntryPath(namespace, group, topicOf(namespace, name)))),
  ];
  const recordPath = kafkaGroupPath(namespace, group);
  let removed = 0;
  await pMap(
    entries,
    async (path) => {
      if ((await context.store.get(path)) === undefined) return;
      await context.store.delete(path);
      removed++;
    },
    { concurrency: KAFKA_GROUP_INDEX_CONCURRENCY },
  );
  return retryOnConflict(`updating Kafka group ${group}'s index`, async () => {
    const found = await readRecord(context.store, recordPath, KafkaGroupIndexRecordSchema);
    if (found === undefined) return undefined;
    const state = markComplete && found.record.state === 'partial' ? 'complete' : found.record.state;
    const record = { state, entries: Math.max(0, found.record.entries - removed) };
    if (removed > 0 || state !== found.record.state) {
      await writeRecord(context.store, recordPath, record, found.version);
    }
    return state;
  });
}

/**
 * Deletes the group's record and its entries if the record is still at
 * `expectedVersion`: ABORTED / KAFKA_GROUP_INDEX_CHANGED when an entry was
 * added or removed since it was read. The entries go first, the record last
 * (by compare-and-set), so an entry added meanwhile either stops the deletion
 * or is found again under the record its add writes anew.
 */
export async function deleteKafkaGroupIndex(
  context: AdminContext,
  namespaceName: string,
  groupId: string,
  expectedVersion: number,
): Promise<void> {
  const namespace = parseNamespace(namespaceName);
  const group = checkGroup(namespace, groupId);
  if (!Number.isSafeInteger(expectedVersion) || expectedVersion < 1) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_VERSION,
      `expected_version must be the version GetKafkaGroupIndex answered (1 or more); got ${expectedVersion}`,
    );
  }
  const recordPath = kafkaGroupPath(namespace, group);
  const found = await context.store.get(recordPath);
  if (found === undefined) return;
  if (found.version !== expectedVersion) throw indexChanged(group, namespace);
  await removeEntries(context, recordPath);
  try {
    await context.store.delete(recordPath, { expectedVersion });
  } catch (error) {
    if (isBadVersion(error)) throw indexChanged(group, namespace);
    throw error;
  }
}

async function removeEntries(context: AdminContext, recordPath: string): Promise<void> {
  await forEachChildPage(context.store, recordPath, async (names) => {
    await pMap(names, (name) => context.store.delete(`${recordPath}/${name}`), {
      concurrency: KAFKA_GROUP_INDEX_CONCURRENCY,
    });
  });
}

function indexChanged(group: string, namespace: NamespaceName): LedgerlineError {
  return new LedgerlineError(
    'ABORTED',
    MetadataServiceReason.KAFKA_GROUP_INDEX_CHANGED,
    `the index of Kafka group ${group} in ${namespace.toString()} changed since it was read: read it again`,
    { details: { group, namespace: namespace.toString() } },
  );
}

/** Removes every group index of a namespace being deleted (it has no topics left, so no commits). */
export async function deleteKafkaGroupIndexes(context: AdminContext, namespace: NamespaceName): Promise<void> {
  const dir = kafkaGroupsDir(namespace);
  await forEachChildPage(context.store, dir, async (groups) => {
    for (const group of groups) {
      await removeEntries(context, `${dir}/${group}`);
      await context.store.delete(`${dir}/${group}`);
    }
  });
}
