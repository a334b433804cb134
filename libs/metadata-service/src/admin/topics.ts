import {
  encodeLedgersDeletable,
  LEDGERS_DELETABLE_SUBJECT,
  MAX_DELETABLE_LEDGERS_PER_NOTIFICATION,
} from '@ledgerline/bus';
import { persistenceName, TopicName, type NamespaceName } from '@ledgerline/naming';
import { invalidArgument, LedgerlineError } from '@ledgerline/errors';
import type { MetadataStore } from '@ledgerline/metadata-store';
import type { AdminContext } from '../admin-context.js';
import { isBadVersion, retryOnConflict } from '../records/cas-retry.js';
import { deletingTopicPath, leasePath, partitionedTopicPath } from '../records/layout.js';
import { CREATE_CONCURRENCY, MAX_PARTITIONS } from '../limits.js';
import {
  createManagedLedgerNode,
  markManagedLedgerDeleted,
  readLiveManagedLedger,
} from '../records/managed-ledger-nodes.js';
import { parseNamespace } from './namespaces.js';
import {
  forgetTopicId,
  indexTopicId,
  newTopicId,
  partitionedTopicWithId,
  plainTopicId,
  topicIdProperty,
  unindexTopicId,
} from './topic-ids.js';
import { PartitionedTopicRecordSchema, type PartitionedTopicRecord } from '../records/records.js';
import { deleteIfUnchanged, readRecord, writeRecord } from '../records/store-records.js';
import pMap from 'p-map';
import { namespaceReadonly, readTopicCounter } from './topic-counter.js';
import { kindConflict, partitionedTopicExists, plainTopicExists, undoPlainCreate } from './topic-kind-conflicts.js';
import type { TopicReservations } from './topic-reservations.js';
import {
  checkPathLengths,
  resolveNamespaceStorage,
  resolveTopic,
  storagePath,
  tooManyTopics,
  topicExists,
  topicNotFound,
  type TopicScope,
} from './topic-scope.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

export interface TopicInfo {
  name: string;
  /** 0 for a non-partitioned topic. */
  partitions: number;
  /** The managed-ledger node (PIP-157 layout); '' for a partitioned topic, whose partitions each have one. */
  managedLedgerPath: string;
  createdAtMs: number;
  /** The topic's id (32 hex digits, admin/topic-ids.ts); undefined where an answer does not carry it. */
  topicId?: string;
}

/**
 * Called when a namespace's counter may be above its real count: a create was
 * refused by the limit, or failed after reserving without knowing whether its
 * write landed. The service schedules a recount (topic-recount.ts).
 */
export type CountDriftListener = (namespace: NamespaceName) => void;

export function refuseWrites(scope: TopicScope): void {
  if (scope.readonly) throw namespaceReadonly(scope.topic.namespaceName);
}

/** `x-partition-N` names belong to partitioned topics; creating one on its own would collide with them. */
export function refusePartitionName(topic: TopicName): void {
  if (topic.isPartitioned) {
    throw invalidArgument(
      MetadataServiceReason.PARTITION_NAME_RESERVED,
      `${topic.toString()} is a partition name; create the partitioned topic ${topic.partitionedTopicName} instead`,
    );
  }
}

/**
 * Writes a topic's managed-ledger node; a revived node (see
 * createManagedLedgerNode) also loses its deletion marker, so listings show it again.
 */
export async function writeTopicNode(
  store: MetadataStore,
  topic: TopicName,
  path: string,
  topicId?: string,
): Promise<'created' | 'exists'> {
  const outcome = await createManagedLedgerNode(store, path, topicId);
  if (outcome === 'revived') await store.delete(deletingTopicPath(topic));
  return outcome === 'exists' ? 'exists' : 'created';
}

/** A partition count from `min` to MAX_PARTITIONS, else INVALID_ARGUMENT / INVALID_PARTITIONS. */
function checkPartitionCount(partitions: number, min: number): void {
  if (!Number.isInteger(partitions) || partitions < min || partitions > MAX_PARTITIONS) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_PARTITIONS,
      `partitions must be an integer from ${min} to ${MAX_PARTITIONS}, got ${partitions}`,
    );
  }
}

/** Topic administration: create (plain or partitioned), grow a partitioned one, get, delete, count. */
export class TopicAdmin {
  readonly #context: AdminContext;
  readonly #reservations: TopicReservations;
  readonly #onCountDrift: CountDriftListener;

  constructor(context: AdminContext, reservations: TopicReservations, onCountDrift: CountDriftListener = () => {}) {
    this.#context = context;
    this.#reservations = reservations;
    this.#onCountDrift = onCountDrift;
  }

  get reservations(): TopicReservations {
    return this.#reservations;
  }

  async createTopic(name: string, partitions = 0): Promise<TopicInfo> {
    checkPartitionCount(partitions, 0);
    const scope = await resolveTopic(this.#context, name);
    refuseWrites(scope);
    refusePartitionName(scope.topic);
    return partitions === 0 ? this.#createPlain(scope) : this.#createPartitioned(scope, partitions);
  }

  async #reserve(scope: TopicScope, slots: number): Promise<void> {
    const granted = await this.#reservations.reserve(scope.storageNamespace, slots, true);
    if (granted < slots) {
      this.#onCountDrift(scope.storageNamespace);
      throw tooManyTopics(scope.storageNamespace, scope.namespaceRecord.policies.maxTopics);
    }
  }

  async #createPlain(scope: TopicScope): Promise<TopicInfo> {
    if (await this.#context.store.exists(partitionedTopicPath(scope.topic))) throw topicExists(scope.topic);
    await this.#reserve(scope, 1);
    const topicId = newTopicId();
    let outcome: 'created' | 'exists';
    try {
      await indexTopicId(this.#context.store, scope.topic, topicId);
      outcome = await writeTopicNode(this.#context.store, scope.topic, storagePath(scope), topicId);
    } catch (error) {
      // The write may have landed: keep the slot (high, never low) and let a recount decide.
      this.#onCountDrift(scope.storageNamespace);
      throw error;
    }
    if (outcome === 'exists') {
      await unindexTopicId(this.#context.store, scope.topic.namespaceName, topicId);
      await this.#reservations.release(scope.storageNamespace, 1);
      throw topicExists(scope.topic);
    }
    if (await partitionedTopicExists(this.#context, scope.topic)) {
      await this.#undoPlain(scope);
      throw kindConflict(scope.topic);
    }
    return {
      name: scope.topic.toString(),
      partitions: 0,
      managedLedgerPath: storagePath(scope),
      createdAtMs: this.#context.now(),
      topicId,
    };
  }

  /** Undoes a plain create that raced a partitioned one (see topic-kind-conflicts.ts) and gives its slot back. */
  async #undoPlain(scope: TopicScope): Promise<void> {
    try {
      await undoPlainCreate(this.#context, scope.topic, storagePath(scope));
    } catch (error) {
      this.#onCountDrift(scope.storageNamespace);
      throw error;
    }
    await this.#reservations.release(scope.storageNamespace, 1);
  }

  async #createPartitioned(scope: TopicScope, partitions: number): Promise<TopicInfo> {
    checkPathLengths(scope.topic.partition(partitions - 1));
    if ((await readLiveManagedLedger(this.#context.store, storagePath(scope))) !== undefined)
      throw topicExists(scope.topic);
    await this.#reserve(scope, partitions);
    const topicId = newTopicId();
    const record: PartitionedTopicRecord = { partitions, createdAtMs: this.#context.now(), topicId };
    let version: number;
    try {
      await indexTopicId(this.#context.store, scope.topic, topicId);
      version = await writeRecord(this.#context.store, partitionedTopicPath(scope.topic), record, 'absent');
    } catch (error) {
      await this.#reservations.release(scope.storageNamespace, partitions);
      if (isBadVersion(error)) await unindexTopicId(this.#context.store, scope.topic.namespaceName, topicId);
      throw isBadVersion(error) ? topicExists(scope.topic) : error;
    }
    if (await plainTopicExists(this.#context, storagePath(scope))) {
      await deleteIfUnchanged(this.#context.store, partitionedTopicPath(scope.topic), version);
      await this.#reservations.release(scope.storageNamespace, partitions);
      throw kindConflict(scope.topic);
    }
    await this.#writePartitionNodes(scope, 0, partitions);
    return {
      name: scope.topic.toString(),
      partitions,
      managedLedgerPath: '',
      createdAtMs: record.createdAtMs,
      topicId,
    };
  }

  /**
   * Writes the managed-ledger nodes of partitions `from` to `to - 1`, whose
   * slots the caller reserved. Slots go back only for partitions known to
   * exist already; after an error the rest stay reserved (the counter may be
   * high, never low) until a recount.
   */
  async #writePartitionNodes(scope: TopicScope, from: number, to: number): Promise<void> {
    let existing = 0;
    try {
      await pMap(
        Array.from({ length: to - from }, (_, index) => scope.topic.partition(from + index)),
        async (partition) => {
          if ((await writeTopicNode(this.#context.store, partition, storagePath(scope, partition))) === 'exists')
            existing++;
        },
        { concurrency: CREATE_CONCURRENCY },
      );
    } catch (error) {
      this.#onCountDrift(scope.storageNamespace);
      throw error;
    } finally {
      await this.#reservations.release(scope.storageNamespace, existing);
    }
  }

  /**
   * Grows a partitioned topic to `partitions` (Pulsar's
   * update-partitioned-topic). The new partitions' nodes are written first and
   * the count raised after, by compare-and-set on the record read, so a
   * partition is never counted before it exists and the partitions there were
   * are untouched. A grow that fails between the two leaves nodes the count
   * does not name yet; the next grow over them finds them and takes them in,
   * as it does those of a concurrent grow (a conflict re-reads and retries).
   * With validateOnly every check runs and nothing is written.
   */
  async updatePartitionedTopic(name: string, partitions: number, validateOnly = false): Promise<TopicInfo> {
    checkPartitionCount(partitions, 1);
    const scope = await resolveTopic(this.#context, name);
    refuseWrites(scope);
    return retryOnConflict(`growing ${scope.topic.toString()}`, () => this.#grow(scope, partitions, validateOnly));
  }

  async #grow(scope: TopicScope, partitions: number, validateOnly: boolean): Promise<TopicInfo> {
    const { store } = this.#context;
    const path = partitionedTopicPath(scope.topic);
    const found = await readRecord(store, path, PartitionedTopicRecordSchema);
    if (found === undefined) {
      if ((await readLiveManagedLedger(store, storagePath(scope))) === undefined) throw topicNotFound(scope.topic);
      throw new LedgerlineError(
        'FAILED_PRECONDITION',
        MetadataServiceReason.TOPIC_NOT_PARTITIONED,
        `${scope.topic.toString()} is not a partitioned topic: it cannot gain partitions`,
      );
    }
    const current = found.record.partitions;
    if (partitions <= current) {
      throw new LedgerlineError(
        'FAILED_PRECONDITION',
        MetadataServiceReason.PARTITION_COUNT_NOT_INCREASED,
        `${scope.topic.toString()} has ${current} partition(s); ${partitions} would not be an increase`,
        { details: { partitions: String(current) } },
      );
    }
    checkPathLengths(scope.topic.partition(partitions - 1));
    const grown = {
      name: scope.topic.toString(),
      partitions,
      managedLedgerPath: '',
      createdAtMs: found.record.createdAtMs,
      ...(found.record.topicId === undefined ? {} : { topicId: found.record.topicId }),
    };
    if (validateOnly) return grown;
    await this.#reserve(scope, partitions - current);
    await this.#writePartitionNodes(scope, current, partitions);
    await writeRecord(store, path, { ...found.record, partitions }, found.version);
    return grown;
  }

  /**
   * A topic with its id; a topic created before ids existed gets one now
   * (admin/topic-ids.ts). A topic of a reader namespace has its writer topic's id.
   */
  async getTopic(name: string): Promise<TopicInfo> {
    const scope = await resolveTopic(this.#context, name);
    const { store } = this.#context;
    const partitioned = await readRecord(store, partitionedTopicPath(scope.storageTopic), PartitionedTopicRecordSchema);
    if (partitioned !== undefined) {
      const record = await partitionedTopicWithId(store, scope.storageTopic, partitioned);
      if (record === undefined) throw topicNotFound(scope.topic);
      const { partitions, createdAtMs, topicId } = record;
      return { name: scope.topic.toString(), partitions, managedLedgerPath: '', createdAtMs, topicId };
    }
    const node = await readLiveManagedLedger(store, storagePath(scope));
    if (node === undefined) throw topicNotFound(scope.topic);
    return {
      name: scope.topic.toString(),
      partitions: 0,
      managedLedgerPath: storagePath(scope),
      createdAtMs: node.createdAtMs,
      topicId: await plainTopicId(store, scope.storageTopic, node.info.properties),
    };
  }

  /**
   * Deletes a topic (every partition of a partitioned one). Its ledgers are
   * marked deletable in its ManagedLedgerInfo, never dropped; returns their ids.
   */
  async deleteTopic(name: string): Promise<bigint[]> {
    const scope = await resolveTopic(this.#context, name);
    refuseWrites(scope);
    const { topic } = scope;
    if (
      topic.isPartitioned &&
      (await this.#context.store.exists(partitionedTopicPath(TopicName.parse(topic.partitionedTopicName))))
    ) {
      throw new LedgerlineError(
        'FAILED_PRECONDITION',
        MetadataServiceReason.PARTITION_OF_PARTITIONED_TOPIC,
        `${topic.toString()} is a partition of ${topic.partitionedTopicName}; delete the partitioned topic instead`,
      );
    }
    const partitioned = await readRecord(
      this.#context.store,
      partitionedTopicPath(topic),
      PartitionedTopicRecordSchema,
    );
    await this.#reservations.touch(scope.storageNamespace);
    if (partitioned === undefined) {
      const node = await readLiveManagedLedger(this.#context.store, storagePath(scope));
      const ids = await this.#deleteOne(scope, topic);
      if (ids === undefined) throw topicNotFound(topic);
      await forgetTopicId(this.#context.store, topic, topicIdProperty(node?.info.properties ?? []));
      return ids;
    }
    const partitions = Array.from({ length: partitioned.record.partitions }, (_, index) => topic.partition(index));
    const perPartition = await pMap(partitions, (partition) => this.#deleteOne(scope, partition), {
      concurrency: CREATE_CONCURRENCY,
    });
    await deleteIfUnchanged(this.#context.store, partitionedTopicPath(topic), partitioned.version);
    await forgetTopicId(this.#context.store, topic, partitioned.record.topicId);
    return perPartition.flatMap((ids) => ids ?? []);
  }

  async #deleteOne(scope: TopicScope, topic: TopicName): Promise<bigint[] | undefined> {
    const { store } = this.#context;
    const tombstone = deletingTopicPath(topic);
    const result = await markManagedLedgerDeleted(store, storagePath(scope, topic), this.#context.now(), async () => {
      await writeRecord(store, tombstone, { deletedAtMs: this.#context.now() });
    });
    if (result.outcome === 'missing') return undefined;
    await this.#reservations.release(scope.storageNamespace, 1);
    await store.delete(leasePath(topic));
    await this.#announceDeletable(persistenceName(topic, scope.storageBuckets), result.deletableLedgerIds);
    return result.deletableLedgerIds;
  }

  /** Tells the garbage collector about newly marked ledgers; a hint only (the marks in metadata are the truth). */
  async #announceDeletable(name: string, ledgerIds: bigint[]): Promise<void> {
    const bus = this.#context.bus;
    if (bus === undefined) return;
    for (let start = 0; start < ledgerIds.length; start += MAX_DELETABLE_LEDGERS_PER_NOTIFICATION) {
      const chunk = ledgerIds.slice(start, start + MAX_DELETABLE_LEDGERS_PER_NOTIFICATION).map(Number);
      await bus.publish(LEDGERS_DELETABLE_SUBJECT, encodeLedgersDeletable({ name, ledgerIds: chunk }));
    }
  }

  /** The number of topics (each partition counts), from the namespace's counter: O(1). */
  async countTopics(namespaceName: string): Promise<number> {
    const namespace = parseNamespace(namespaceName);
    const storage = await resolveNamespaceStorage(this.#context, namespace);
    const counter = await readTopicCounter(this.#context, storage.storageNamespace);
    return counter?.record.count ?? 0;
  }
}
