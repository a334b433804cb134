import { managedLedgerPath, type NamespaceName, type TopicName } from '@ledgerline/naming';
import { invalidArgument, LedgerlineError } from '@ledgerline/errors';
import type { AdminContext } from '../admin-context.js';
import { partitionedTopicPath, partitionedTopicsDir } from '../records/layout.js';
import { CREATE_CONCURRENCY, MAX_CREATE_BATCH } from '../limits.js';
import { listChildren } from '../records/store-records.js';
import pMap from 'p-map';
import { namespaceReadonly } from './topic-counter.js';
import { kindConflict, undoPlainCreate } from './topic-kind-conflicts.js';
import type { TopicReservations } from './topic-reservations.js';
import { parseTopic, resolveNamespaceStorage, tooManyTopics, topicExists } from './topic-scope.js';
import { refusePartitionName, writeTopicNode, type CountDriftListener } from './topics.js';
import { indexTopicId, newTopicId, unindexTopicId } from './topic-ids.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

export interface TopicCreateResult {
  topic: string;
  created: boolean;
  /** '' on success, else the reason (TOPIC_EXISTS, TOO_MANY_TOPICS, INVALID_TOPIC_NAME, ...). */
  errorReason: string;
  errorMessage: string;
}

interface Item {
  index: number;
  topic: TopicName;
}

// Partitioned topic names read in one go to screen a batch; beyond this, each topic is checked on its own.
const PARTITIONED_SCREEN_LIMIT = 1000;

function failure(topic: string, error: unknown): TopicCreateResult {
  const failed = LedgerlineError.from(error);
  return { topic, created: false, errorReason: failed.reason, errorMessage: failed.message };
}

/**
 * Creates many non-partitioned topics; each succeeds or fails on its own. Per
 * namespace the batch costs one counter reservation (as many slots as fit
 * under maxTopics, in request order) and one create-only write per topic.
 */
export async function createTopicsBatch(
  context: AdminContext,
  reservations: TopicReservations,
  onCountDrift: CountDriftListener,
  names: readonly string[],
): Promise<TopicCreateResult[]> {
  if (names.length > MAX_CREATE_BATCH) {
    throw invalidArgument(
      MetadataServiceReason.BATCH_TOO_LARGE,
      `a batch creates at most ${MAX_CREATE_BATCH} topics, got ${names.length}`,
    );
  }
  const results: TopicCreateResult[] = names.map((topic) => ({
    topic,
    created: false,
    errorReason: '',
    errorMessage: '',
  }));
  const groups = new Map<string, { namespace: NamespaceName; items: Item[] }>();
  const seen = new Set<string>();
  names.forEach((name, index) => {
    try {
      const topic = parseTopic(name);
      refusePartitionName(topic);
      if (seen.has(topic.toString()))
        throw new LedgerlineError(
          'ALREADY_EXISTS',
          MetadataServiceReason.DUPLICATE_TOPIC,
          `${name} is listed twice in this batch`,
        );
      seen.add(topic.toString());
      const key = topic.namespaceName.toString();
      const group = groups.get(key) ?? { namespace: topic.namespaceName, items: [] };
      group.items.push({ index, topic });
      groups.set(key, group);
    } catch (error) {
      results[index] = failure(name, error);
    }
  });
  for (const group of groups.values()) {
    try {
      await createInNamespace(context, reservations, onCountDrift, group.namespace, group.items, results);
    } catch (error) {
      for (const item of group.items) results[item.index] = failure(names[item.index]!, error);
    }
  }
  for (const result of results) result.created = result.errorReason === '';
  return results;
}

async function createInNamespace(
  context: AdminContext,
  reservations: TopicReservations,
  onCountDrift: CountDriftListener,
  namespace: NamespaceName,
  items: Item[],
  results: TopicCreateResult[],
): Promise<void> {
  const storage = await resolveNamespaceStorage(context, namespace);
  if (storage.readonly) throw namespaceReadonly(namespace);
  const candidates = await withoutPartitionedNames(context, namespace, items, results);
  const granted = await reservations.reserve(storage.storageNamespace, candidates.length, false);
  if (granted < candidates.length) onCountDrift(storage.storageNamespace);
  for (const item of candidates.slice(granted)) {
    results[item.index] = failure(item.topic.toString(), tooManyTopics(namespace, storage.record.policies.maxTopics));
  }
  let unused = 0;
  const written: Item[] = [];
  await pMap(
    candidates.slice(0, granted),
    async (item) => {
      try {
        const topicId = newTopicId();
        await indexTopicId(context.store, item.topic, topicId);
        const outcome = await writeTopicNode(
          context.store,
          item.topic,
          managedLedgerPath(item.topic, storage.storageBuckets),
          topicId,
        );
        if (outcome === 'exists') {
          await unindexTopicId(context.store, item.topic.namespaceName, topicId);
          unused++;
          results[item.index] = failure(item.topic.toString(), topicExists(item.topic));
        } else {
          written.push(item);
        }
      } catch (error) {
        onCountDrift(storage.storageNamespace);
        results[item.index] = failure(item.topic.toString(), error);
      }
    },
    { concurrency: CREATE_CONCURRENCY },
  );
  unused += await undoKindConflicts(context, onCountDrift, namespace, storage.storageBuckets, written, results);
  await reservations.release(storage.storageNamespace, unused);
}

/**
 * Screens the topics just written for partitioned topics of the same name
 * created meanwhile, after the writes (see topic-kind-conflicts.ts), and undoes
 * those; returns how many were undone.
 */
async function undoKindConflicts(
  context: AdminContext,
  onCountDrift: CountDriftListener,
  namespace: NamespaceName,
  buckets: number,
  written: Item[],
  results: TopicCreateResult[],
): Promise<number> {
  if (written.length === 0) return 0;
  const taken = await partitionedNames(context, namespace, written);
  const conflicts = written.filter((_, position) => taken[position]);
  let undone = 0;
  await pMap(
    conflicts,
    async (item) => {
      try {
        await undoPlainCreate(context, item.topic, managedLedgerPath(item.topic, buckets));
        results[item.index] = failure(item.topic.toString(), kindConflict(item.topic));
        undone++;
      } catch (error) {
        // The slot stays reserved (high, never low) until a recount.
        onCountDrift(namespace);
        results[item.index] = failure(item.topic.toString(), error);
      }
    },
    { concurrency: CREATE_CONCURRENCY },
  );
  return undone;
}

/** Which of the items are names of partitioned topics: one listing when there are few of those. */
async function partitionedNames(context: AdminContext, namespace: NamespaceName, items: Item[]): Promise<boolean[]> {
  const screen = await listChildren(context.store, partitionedTopicsDir(namespace), PARTITIONED_SCREEN_LIMIT);
  if (screen.truncated) {
    return pMap(items, (item) => context.store.exists(partitionedTopicPath(item.topic)), {
      concurrency: CREATE_CONCURRENCY,
    });
  }
  const taken = new Set(screen.names);
  return items.map((item) => taken.has(item.topic.encodedLocalName));
}

/** Drops topics whose name is taken by a partitioned topic, recording TOPIC_EXISTS for them. */
async function withoutPartitionedNames(
  context: AdminContext,
  namespace: NamespaceName,
  items: Item[],
  results: TopicCreateResult[],
) {
  const isTaken = await partitionedNames(context, namespace, items);
  return items.filter((item, position) => {
    if (!isTaken[position]) return true;
    results[item.index] = failure(item.topic.toString(), topicExists(item.topic));
    return false;
  });
}
