import {
  managedLedgerPath,
  TopicName,
  decodeLocalName,
  topicListingPaths,
  type NamespaceName,
} from '@ledgerline/naming';
import type { AdminContext } from '../admin-context.js';
import { isBadVersion } from '../records/cas-retry.js';
import { deletingTopicPath, deletingTopicsDir, topicCountPath } from '../records/layout.js';
import { readLiveManagedLedger } from '../records/managed-ledger-nodes.js';
import { readNamespace } from './namespaces.js';
import { TombstoneRecordSchema, type CounterRecord } from '../records/records.js';
import { deleteIfUnchanged, forEachChildPage, readRecord, writeRecord } from '../records/store-records.js';
import { readTopicCounter } from './topic-counter.js';

export interface RecountResult {
  namespace: string;
  /** The counter before, and the real count found (equal when nothing drifted). */
  counted: number;
  before: number;
  /** True when the counter was rewritten to the real count. */
  corrected: boolean;
  /** Why nothing was written although the counts differ: the counter moved (creates in flight). */
  skipped?: 'busy';
}

/**
 * Recounts a namespace's topics by paging every bucket (names only; a topic
 * with a deletion marker is read to see whether it is live) and fixes the
 * counter when a crash left it high. Creates reserve before they write and
 * deletions touch the counter before they mark (releasing after), so the
 * counter is only trusted to be stale when it has not changed for `settleMs`
 * (no create or delete is then between its counter write and its node write)
 * and did not change during the recount either; otherwise nothing is written.
 */
export async function reconcileTopicCount(
  context: AdminContext,
  namespace: NamespaceName,
  settleMs: number,
): Promise<RecountResult> {
  const found = await readNamespace(context, namespace);
  const buckets = found.record.policies.numberOfTopicBuckets;
  const counter = await readTopicCounter(context, namespace);
  const before = counter?.record.count ?? 0;
  const result: RecountResult = { namespace: namespace.toString(), counted: before, before, corrected: false };
  if (counter === undefined) return result;
  if (context.now() - counter.modifiedAtMs < settleMs) return { ...result, skipped: 'busy' };
  await repairDeletionMarkers(context, namespace, buckets, settleMs);
  const counted = await countLiveTopics(context, namespace, buckets);
  if (counted === before) return { ...result, counted };
  const after = await readTopicCounter(context, namespace);
  if (after === undefined || after.version !== counter.version) return { ...result, counted, skipped: 'busy' };
  try {
    await writeRecord(
      context.store,
      topicCountPath(namespace),
      { count: counted } satisfies CounterRecord,
      counter.version,
    );
  } catch (error) {
    if (isBadVersion(error)) return { ...result, counted, skipped: 'busy' };
    throw error;
  }
  return { ...result, counted, corrected: true };
}

/** The number of live topic nodes in a namespace's buckets. */
export async function countLiveTopics(
  context: AdminContext,
  namespace: NamespaceName,
  buckets: number,
): Promise<number> {
  const marked = new Set<string>();
  await forEachChildPage(context.store, deletingTopicsDir(namespace), (names) => {
    for (const name of names) marked.add(name);
  });
  let count = 0;
  const markedNames: string[] = [];
  for (const dir of topicListingPaths(namespace, buckets)) {
    await forEachChildPage(context.store, dir, (names) => {
      for (const name of names) {
        if (name.startsWith('$')) continue;
        if (marked.has(name)) markedNames.push(name);
        else count++;
      }
    });
  }
  for (const name of markedNames) {
    const topic = TopicName.inNamespace(namespace, decodeLocalName(name));
    if ((await readLiveManagedLedger(context.store, managedLedgerPath(topic, buckets))) !== undefined) count++;
  }
  return count;
}

/**
 * Deletion markers are written before a topic is marked DELETING and removed
 * when it is revived; an interrupted delete or revival can leave one behind.
 * A marker older than `settleMs` whose topic is live or gone is removed.
 */
export async function repairDeletionMarkers(
  context: AdminContext,
  namespace: NamespaceName,
  buckets: number,
  settleMs: number,
): Promise<number> {
  let removed = 0;
  await forEachChildPage(context.store, deletingTopicsDir(namespace), async (names) => {
    for (const name of names) {
      const topic = TopicName.inNamespace(namespace, decodeLocalName(name));
      const marker = await readRecord(context.store, deletingTopicPath(topic), TombstoneRecordSchema);
      if (marker === undefined || context.now() - marker.modifiedAtMs < settleMs) continue;
      const node = await context.store.get(managedLedgerPath(topic, buckets));
      const live =
        node !== undefined &&
        (await readLiveManagedLedger(context.store, managedLedgerPath(topic, buckets))) !== undefined;
      if (
        (node === undefined || live) &&
        (await deleteIfUnchanged(context.store, deletingTopicPath(topic), marker.version))
      )
        removed++;
    }
  });
  return removed;
}
