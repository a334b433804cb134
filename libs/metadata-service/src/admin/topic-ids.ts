import { randomUUID } from 'node:crypto';
import { managedLedgerPath, TopicName, type NamespaceName } from '@ledgerline/naming';
import { invalidArgument, LedgerlineError } from '@ledgerline/errors';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';
import type { MetadataStore } from '@ledgerline/metadata-store';
import type { AdminContext } from '../admin-context.js';
import { STALE_TOPIC_ID_ENTRY_MS } from '../limits.js';
import { retryOnConflict } from '../records/cas-retry.js';
import { legacyTopicIdPath, partitionedTopicPath, topicIdIndexPath } from '../records/layout.js';
import {
  PartitionedTopicRecordSchema,
  TopicIdIndexRecordSchema,
  TopicIdRecordSchema,
  type PartitionedTopicRecord,
} from '../records/records.js';
import { readLiveManagedLedger, TOPIC_ID_PROPERTY } from '../records/managed-ledger-nodes.js';
import { parseNamespace } from './namespaces.js';
import { resolveNamespaceStorage } from './topic-scope.js';
import { deleteIfUnchanged, readRecord, writeRecord, type VersionedRecord } from '../records/store-records.js';

/**
 * Topic ids (Kafka's, KIP-516): a random UUID given to a topic when it is
 * created, kept for its whole life, never given again, so a topic deleted and
 * created again under the same name is told apart by its id.
 *
 * Where an id lives: a partitioned topic's in its record (deleted with the
 * topic, so a new topic of the name writes a new record and a new id); a
 * non-partitioned topic's in its ManagedLedgerInfo, as the property
 * TOPIC_ID_PROPERTY written with the node (a revived node is written afresh,
 * with a new id; owners keep the properties they do not know). Topics created
 * before ids existed get one on first need, by a compare-and-set: in the
 * partitioned record, or for a non-partitioned topic in a record of its own
 * (`legacyTopicIdPath`, create-only, since the ManagedLedgerInfo is its
 * owner's to write). Two instances racing to give one both answer the winner's.
 *
 * Ids are found through an index (`topicIdIndexPath`, by namespace) written
 * before the id is stored with its topic, so every id a topic has is indexed.
 * The index is a hint: a lookup checks the topic it names still has that id,
 * so an entry left by a deletion or a failed create answers "unknown" (and is
 * removed by that lookup).
 */

/** A fresh id: a version 4 UUID as 32 hex digits, so never Kafka's all-zero "no id". */
export function newTopicId(): string {
  return randomUUID().replaceAll('-', '');
}

/** INVALID_ARGUMENT unless `bytes` is a topic id (16 bytes, not all zero); its stored form otherwise. */
export function topicIdFromBytes(bytes: Uint8Array): string {
  if (bytes.length !== 16 || bytes.every((byte) => byte === 0)) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_TOPIC_ID,
      `a topic id is 16 bytes, not all zero; got ${bytes.length} byte(s)`,
    );
  }
  return Buffer.from(bytes).toString('hex');
}

/** Indexes `topicId` as `topic`'s; done before the id is stored with the topic. */
export async function indexTopicId(store: MetadataStore, topic: TopicName, topicId: string): Promise<void> {
  await writeRecord(store, topicIdIndexPath(topic.namespaceName, topicId), { topic: topic.toString() }, 'absent');
}

/** Drops an index entry (a create that did not happen, a deleted topic); one that changed meanwhile stays. */
export async function unindexTopicId(store: MetadataStore, namespace: NamespaceName, topicId: string): Promise<void> {
  const path = topicIdIndexPath(namespace, topicId);
  const found = await store.get(path);
  if (found !== undefined) await deleteIfUnchanged(store, path, found.version);
}

/**
 * A partitioned topic's id, given now if its record (written before ids
 * existed) has none. Answers the record as it is after, or undefined when
 * the topic went meanwhile.
 */
export async function partitionedTopicWithId(
  store: MetadataStore,
  topic: TopicName,
  found: VersionedRecord<PartitionedTopicRecord>,
): Promise<PartitionedTopicRecord | undefined> {
  if (found.record.topicId !== undefined) return found.record;
  const topicId = newTopicId();
  await indexTopicId(store, topic, topicId);
  const path = partitionedTopicPath(topic);
  const stored = await retryOnConflict(`giving ${topic.toString()} an id`, async () => {
    const current = await readRecord(store, path, PartitionedTopicRecordSchema);
    if (current === undefined || current.record.topicId !== undefined) return current?.record;
    const record = { ...current.record, topicId };
    await writeRecord(store, path, record, current.version);
    return record;
  });
  if (stored?.topicId !== topicId) await unindexTopicId(store, topic.namespaceName, topicId);
  return stored;
}

/** The id a topic's ManagedLedgerInfo carries (written with its node since ids exist). */
export function topicIdProperty(properties: ReadonlyArray<{ key?: string; value?: string }>): string | undefined {
  const value = properties.find((property) => property.key === TOPIC_ID_PROPERTY)?.value;
  return value === undefined || value === '' ? undefined : value;
}

/**
 * A non-partitioned topic's id: its ManagedLedgerInfo's, else (a topic
 * created before ids existed) its own id record, written now if absent.
 */
export async function plainTopicId(
  store: MetadataStore,
  topic: TopicName,
  properties: ReadonlyArray<{ key?: string; value?: string }>,
): Promise<string> {
  const own = topicIdProperty(properties);
  if (own !== undefined) return own;
  const path = legacyTopicIdPath(topic);
  const existing = await readRecord(store, path, TopicIdRecordSchema);
  if (existing !== undefined) return existing.record.topicId;
  const topicId = newTopicId();
  await indexTopicId(store, topic, topicId);
  // Create-only: a conflict is another instance giving it one first, and that one is the topic's.
  const stored = await retryOnConflict(`giving ${topic.toString()} an id`, async () => {
    const current = await readRecord(store, path, TopicIdRecordSchema);
    if (current !== undefined) return current.record.topicId;
    await writeRecord(store, path, { topicId }, 'absent');
    return topicId;
  });
  if (stored !== topicId) await unindexTopicId(store, topic.namespaceName, topicId);
  return stored;
}

/**
 * Forgets a deleted topic's id: its index entry and, for a topic created
 * before ids existed, its id record, so the name's next topic gets a new one.
 */
export async function forgetTopicId(
  store: MetadataStore,
  topic: TopicName,
  topicId: string | undefined,
): Promise<void> {
  const legacy = await readRecord(store, legacyTopicIdPath(topic), TopicIdRecordSchema);
  if (legacy !== undefined) {
    await deleteIfUnchanged(store, legacyTopicIdPath(topic), legacy.version);
    await unindexTopicId(store, topic.namespaceName, legacy.record.topicId);
  }
  if (topicId !== undefined) await unindexTopicId(store, topic.namespaceName, topicId);
}

/** The id a live topic has now (given now if it has none yet); undefined when the topic does not exist. */
export async function currentTopicId(
  context: AdminContext,
  topic: TopicName,
  managedLedgerPath: string,
): Promise<string | undefined> {
  const partitioned = await readRecord(context.store, partitionedTopicPath(topic), PartitionedTopicRecordSchema);
  if (partitioned !== undefined) return (await partitionedTopicWithId(context.store, topic, partitioned))?.topicId;
  const node = await readLiveManagedLedger(context.store, managedLedgerPath);
  if (node === undefined) return undefined;
  return plainTopicId(context.store, topic, node.info.properties);
}

/**
 * The topic of `namespace` that has `topicId` now, or undefined. An index
 * entry whose topic is gone or has another id is removed (it is left by a
 * deleted topic or a create that failed).
 */
async function topicOfId(
  context: AdminContext,
  namespace: NamespaceName,
  buckets: number,
  topicId: string,
): Promise<TopicName | undefined> {
  const path = topicIdIndexPath(namespace, topicId);
  const entry = await readRecord(context.store, path, TopicIdIndexRecordSchema);
  if (entry === undefined) return undefined;
  const topic = TopicName.parse(entry.record.topic);
  const current = await currentTopicId(context, topic, managedLedgerPath(topic, buckets));
  if (current === topicId) return topic;
  // An entry is written before its id is stored: one younger than this may belong to a create still under way.
  if (context.now() - entry.modifiedAtMs > STALE_TOPIC_ID_ENTRY_MS) {
    await deleteIfUnchanged(context.store, path, entry.version);
  }
  return undefined;
}

/**
 * The name, in `namespaceName`, of the topic whose id is `topicIdBytes`
 * (a topic of a reader namespace has its writer topic's id); NOT_FOUND /
 * TOPIC_NOT_FOUND when no live topic there has it.
 */
export async function topicNameOfId(
  context: AdminContext,
  namespaceName: string,
  topicIdBytes: Uint8Array,
): Promise<string> {
  const topicId = topicIdFromBytes(topicIdBytes);
  const namespace = parseNamespace(namespaceName);
  const storage = await resolveNamespaceStorage(context, namespace);
  const found = await topicOfId(context, storage.storageNamespace, storage.storageBuckets, topicId);
  if (found === undefined) {
    throw new LedgerlineError(
      'NOT_FOUND',
      MetadataServiceReason.TOPIC_NOT_FOUND,
      `no topic of ${namespace.toString()} has the id ${topicId}`,
      { details: { namespace: namespace.toString(), topicId } },
    );
  }
  return TopicName.inNamespace(namespace, found.localName).toString();
}
