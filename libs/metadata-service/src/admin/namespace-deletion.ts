import { ManagedLedgerState } from '@ledgerline/proto';
import {
  decodeLocalName,
  managedLedgerPath,
  TopicName,
  topicListingPaths,
  type NamespaceName,
} from '@ledgerline/naming';
import { LedgerlineError } from '@ledgerline/errors';
import { deleteKafkaGroupIndexes } from './kafka-group-index.js';
import type { AdminContext } from '../admin-context.js';
import { retryOnConflict } from '../records/cas-retry.js';
import {
  deletingTopicPath,
  deletingTopicsDir,
  managedLedgerParentDirs,
  namespacePath,
  partitionedTopicsDir,
  topicCountPath,
} from '../records/layout.js';
import { CREATE_CONCURRENCY, DEFAULT_RECOUNT_SETTLE_MS, MAX_MARKER_CHECKS_PER_DELETE } from '../limits.js';
import { decodeManagedLedgerInfo } from '../records/managed-ledger-nodes.js';
import { readersOf, removeReaderIndex } from './namespace-readers.js';
import { parseNamespace, readNamespace } from './namespaces.js';
import type { NamespaceRecord } from '../records/records.js';
import {
  deleteIfUnchanged,
  hasChildren,
  listChildren,
  writeRecord,
  type VersionedRecord,
} from '../records/store-records.js';
import pMap from 'p-map';
import { readTopicCounter } from './topic-counter.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

const DELETING = ManagedLedgerState.DELETING;

// Encoded topic names sort after this; `$<b>` bucket directories sort before it.
const BEFORE_EVERY_TOPIC = '$~';

function refuse(reason: string, message: string): LedgerlineError {
  return new LedgerlineError('FAILED_PRECONDITION', reason, message);
}

/**
 * Deletes a namespace that holds no topics. It is first flagged `deleting`
 * (from then on every create is refused), then its topic counter is deleted by
 * compare-and-set: a reservation that slipped in changes the counter's version
 * and the delete re-checks. Topics whose ledgers still await the garbage
 * collector keep the namespace alive (NAMESPACE_HAS_PENDING_DELETIONS), so no
 * deletion marker is lost with it. A refused delete clears the flag again.
 */
export async function deleteNamespace(
  context: AdminContext,
  name: string,
  settleMs: number = DEFAULT_RECOUNT_SETTLE_MS,
): Promise<void> {
  const namespace = parseNamespace(name);
  const found = await readNamespace(context, namespace, true);
  await refuseWhileReaders(context, namespace);
  await setDeleting(context, namespace, true);
  try {
    // Again after the flag: setWriterNamespace flips its reader, then checks this flag (Dekker-style),
    // so of a racing pair one sees the other.
    await refuseWhileReaders(context, namespace);
    await retryOnConflict(`deleting namespace ${namespace.toString()}`, () =>
      releaseCounter(context, namespace, found.record.policies.numberOfTopicBuckets, settleMs),
    );
  } catch (error) {
    await setDeleting(context, namespace, false);
    throw error;
  }
  const dirs = managedLedgerParentDirs(namespace);
  const buckets = found.record.policies.numberOfTopicBuckets;
  if (buckets > 1) {
    await pMap(topicListingPaths(namespace, buckets), (dir) => context.store.delete(dir), {
      concurrency: CREATE_CONCURRENCY,
    });
  }
  await context.store.delete(dirs[3]!);
  await context.store.delete(dirs[2]!);
  // No topic is left, so no commit: the Kafka groups' indexes of the namespace would only leak.
  await deleteKafkaGroupIndexes(context, namespace);
  await context.store.delete(namespacePath(namespace));
  const writer = found.record.policies.writerNamespace;
  if (writer !== '') await removeReaderIndex(context, parseNamespace(writer), namespace);
}

async function refuseWhileReaders(context: AdminContext, namespace: NamespaceName): Promise<void> {
  if ((await readersOf(context, namespace)).length > 0) {
    throw refuse(
      MetadataServiceReason.NAMESPACE_HAS_READERS,
      `${namespace.toString()} is the writer namespace of reader namespaces; delete those first`,
    );
  }
}

async function setDeleting(context: AdminContext, namespace: NamespaceName, deleting: boolean): Promise<void> {
  await retryOnConflict(`flagging namespace ${namespace.toString()}`, async () => {
    const current: VersionedRecord<NamespaceRecord> | undefined = await readNamespace(context, namespace, true).catch(
      (error: unknown) => {
        if (!deleting && LedgerlineError.is(error, MetadataServiceReason.NAMESPACE_NOT_FOUND)) return undefined;
        throw error;
      },
    );
    if (current === undefined || current.record.deleting === deleting) return;
    await writeRecord(context.store, namespacePath(namespace), { ...current.record, deleting }, current.version);
  });
}

async function releaseCounter(context: AdminContext, namespace: NamespaceName, buckets: number, settleMs: number) {
  const counter = await readTopicCounter(context, namespace);
  if (counter === undefined) return;
  if (await hasPendingDeletions(context, namespace, buckets)) {
    throw refuse(
      MetadataServiceReason.NAMESPACE_HAS_PENDING_DELETIONS,
      `${namespace.toString()} has deleted topics whose ledgers the garbage collector has not removed yet; retry later`,
    );
  }
  if (await hasTopics(context, namespace, buckets)) {
    throw refuse(
      MetadataServiceReason.NAMESPACE_NOT_EMPTY,
      `${namespace.toString()} still has topics; delete them first`,
    );
  }
  // No topic nodes, yet reservations: either a create is writing its node right now, or a crash left
  // the counter high. Only a counter that has not moved for the settle time is taken to be stale.
  if (counter.record.count > 0 && context.now() - counter.modifiedAtMs < settleMs) {
    throw refuse(
      MetadataServiceReason.NAMESPACE_NOT_EMPTY,
      `${namespace.toString()} has topics being created; retry later`,
    );
  }
  await context.store.delete(topicCountPath(namespace), { expectedVersion: counter.version });
}

/**
 * True while a deleted topic's node still awaits the garbage collector. A
 * deletion marker whose node is gone (the collector finished, or the topic had
 * no ledgers) is removed here: nothing can bring that node back but a create,
 * which writes a live node that needs no marker. Markers of live nodes (left by
 * an interrupted delete or revival) are the recount's to remove; the topic
 * itself keeps the namespace from being deleted. At most
 * MAX_MARKER_CHECKS_PER_DELETE markers are looked at per call.
 */
async function hasPendingDeletions(context: AdminContext, namespace: NamespaceName, buckets: number) {
  const { names, truncated } = await listChildren(
    context.store,
    deletingTopicsDir(namespace),
    MAX_MARKER_CHECKS_PER_DELETE,
  );
  const pending = await pMap(
    names,
    async (encoded) => {
      const topic = TopicName.inNamespace(namespace, decodeLocalName(encoded));
      const node = await context.store.get(managedLedgerPath(topic, buckets));
      if (node !== undefined) return decodeManagedLedgerInfo(topic.toString(), node.value).state === DELETING;
      const marker = await context.store.get(deletingTopicPath(topic));
      if (marker !== undefined) await deleteIfUnchanged(context.store, deletingTopicPath(topic), marker.version);
      return false;
    },
    { concurrency: CREATE_CONCURRENCY },
  );
  return truncated || pending.some(Boolean);
}

async function hasTopics(context: AdminContext, namespace: NamespaceName, buckets: number): Promise<boolean> {
  if (await hasChildren(context.store, partitionedTopicsDir(namespace))) return true;
  const found = await pMap(
    topicListingPaths(namespace, buckets),
    async (dir) => {
      const page = await context.store.children(dir, { limit: 1, after: BEFORE_EVERY_TOPIC });
      return page.names.length > 0;
    },
    { concurrency: CREATE_CONCURRENCY },
  );
  return found.some(Boolean);
}
