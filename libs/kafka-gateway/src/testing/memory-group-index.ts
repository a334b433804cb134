import { LedgerlineError } from '@ledgerline/errors';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';
import { TopicName } from '@ledgerline/naming';
import type { GroupIndexRead, GroupIndexRecords, GroupIndexState } from '../group-index.js';
import type { Caller } from '../owner-router.js';

interface Stored {
  state: GroupIndexState;
  entries: Set<string>;
  version: number;
}

/**
 * The metadata service's index of groups' committed partitions as the
 * gateway meets it (admin/kafka-group-index.ts in @ledgerline/metadata-service
 * keeps it in the store): a record per group and namespace, complete from the
 * start except in the namespaces named partial (created before the index),
 * marked unindexed past its bound; every call counted, and refused while
 * `refusal` is set.
 */
export class MemoryGroupIndexRecords implements GroupIndexRecords {
  readonly records = new Map<string, Stored>();
  /** Namespaces created before the index: their groups start partial. */
  readonly partialNamespaces = new Set<string>();
  readonly calls = { add: 0, read: 0, update: 0, remove: 0 };
  refusal: LedgerlineError | undefined;

  private key(namespace: string, group: string): string {
    return `${namespace} ${group}`;
  }

  private initialState(namespace: string): GroupIndexState {
    return this.partialNamespaces.has(namespace) ? 'partial' : 'complete';
  }

  /** The group's stored record, if any (for specs that look inside). */
  record(namespace: string, group: string): Stored | undefined {
    return this.records.get(this.key(namespace, group));
  }

  async add(topic: string, group: string, maxPartitions: number, _caller: Caller): Promise<GroupIndexState> {
    this.calls.add++;
    if (this.refusal !== undefined) throw this.refusal;
    const namespace = TopicName.parse(topic).namespaceName.toString();
    const key = this.key(namespace, group);
    const stored = this.records.get(key) ?? { state: this.initialState(namespace), entries: new Set(), version: 0 };
    this.records.set(key, stored);
    if (stored.state === 'unindexed' || stored.entries.has(topic)) return stored.state;
    if (stored.entries.size >= maxPartitions) stored.state = 'unindexed';
    else stored.entries.add(topic);
    stored.version++;
    return stored.state;
  }

  async read(namespace: string, group: string, _caller: Caller): Promise<GroupIndexRead> {
    this.calls.read++;
    if (this.refusal !== undefined) throw this.refusal;
    const stored = this.records.get(this.key(namespace, group));
    if (stored === undefined) return { state: this.initialState(namespace), topics: [], version: 0 };
    return { state: stored.state, topics: [...stored.entries].sort(), version: stored.version };
  }

  async update(
    namespace: string,
    group: string,
    removeTopics: string[],
    markComplete: boolean,
    _caller: Caller,
  ): Promise<void> {
    this.calls.update++;
    if (this.refusal !== undefined) throw this.refusal;
    const stored = this.records.get(this.key(namespace, group));
    if (stored === undefined) return;
    for (const topic of removeTopics) stored.entries.delete(topic);
    if (markComplete && stored.state === 'partial') stored.state = 'complete';
    stored.version++;
  }

  async remove(namespace: string, group: string, version: number, _caller: Caller): Promise<void> {
    this.calls.remove++;
    if (this.refusal !== undefined) throw this.refusal;
    const key = this.key(namespace, group);
    const stored = this.records.get(key);
    if (stored === undefined) return;
    if (stored.version !== version) {
      throw new LedgerlineError('ABORTED', MetadataServiceReason.KAFKA_GROUP_INDEX_CHANGED, `${group} changed`);
    }
    this.records.delete(key);
  }
}
