import { TopicName } from '@ledgerline/naming';
import { KafkaGroupIndexState } from '@ledgerline/proto';
import type { Caller, OwnerRouter } from './owner-router.js';

/**
 * Where a group's index stands: `complete` holds every commit of the group in
 * the namespace, `partial` may miss commits made before the index existed (one
 * last scan finds them), `unindexed` grew past its bound (found by scanning).
 */
export type GroupIndexState = 'partial' | 'complete' | 'unindexed';

export interface GroupIndexRead {
  state: GroupIndexState;
  /** The partition topics indexed (full names). */
  topics: string[];
  /** The record's version for deleteIndex; 0 when the group has none. */
  version: number;
}

/**
 * The metadata service's calls that keep a group's index of committed
 * partitions (AdminService's *KafkaGroup* calls, each needing consume on the
 * namespace, as the commits' cursor moves do).
 */
export interface GroupIndexRecords {
  add(topic: string, group: string, maxPartitions: number, caller: Caller): Promise<GroupIndexState>;
  read(namespace: string, group: string, caller: Caller): Promise<GroupIndexRead>;
  update(
    namespace: string,
    group: string,
    removeTopics: string[],
    markComplete: boolean,
    caller: Caller,
  ): Promise<void>;
  remove(namespace: string, group: string, version: number, caller: Caller): Promise<void>;
}

const STATES: Partial<Record<KafkaGroupIndexState, GroupIndexState>> = {
  [KafkaGroupIndexState.PARTIAL]: 'partial',
  [KafkaGroupIndexState.COMPLETE]: 'complete',
  [KafkaGroupIndexState.UNINDEXED]: 'unindexed',
};

/** An answer this gateway does not know is read as the safe one: scan. */
function stateOf(state: KafkaGroupIndexState): GroupIndexState {
  return STATES[state] ?? 'partial';
}

/** GroupIndexRecords over the metadata service's AdminService, with the client's token. */
export class AdminGroupIndexRecords implements GroupIndexRecords {
  constructor(private readonly router: OwnerRouter) {}

  async add(topic: string, group: string, maxPartitions: number, caller: Caller): Promise<GroupIndexState> {
    const answer = await this.router.admin.addKafkaGroupPartition(
      { topic, group, maxPartitions },
      this.router.callOptions(caller),
    );
    return stateOf(answer.state);
  }

  async read(namespace: string, group: string, caller: Caller): Promise<GroupIndexRead> {
    const answer = await this.router.admin.getKafkaGroupIndex({ namespace, group }, this.router.callOptions(caller));
    return { state: stateOf(answer.state), topics: answer.topics, version: Number(answer.version) };
  }

  async update(
    namespace: string,
    group: string,
    removeTopics: string[],
    markComplete: boolean,
    caller: Caller,
  ): Promise<void> {
    await this.router.admin.updateKafkaGroupIndex(
      { namespace, group, removeTopics, markComplete },
      this.router.callOptions(caller),
    );
  }

  async remove(namespace: string, group: string, version: number, caller: Caller): Promise<void> {
    await this.router.admin.deleteKafkaGroupIndex(
      { namespace, group, expectedVersion: BigInt(version) },
      this.router.callOptions(caller),
    );
  }
}

/** Group-partition entries this gateway remembers having written, over all groups; the oldest group goes first. */
export const MAX_KNOWN_INDEX_ENTRIES = 100_000;

interface KnownGroup {
  readonly group: string;
  unindexed: boolean;
  readonly topics: Set<string>;
}

/**
 * A gateway's side of the index of each group's committed partitions: every
 * commit's partition is added before its cursor moves, once per group and
 * partition, since the entries known written are remembered (up to
 * MAX_KNOWN_INDEX_ENTRIES), so a consumer committing steadily costs no call.
 * What is remembered is dropped where the entry may go: a partition's when
 * its commit is deleted here, a group's when it is deleted here or when
 * another gateway coordinates it (which may delete its entries).
 */
export class GroupIndex {
  private readonly known = new Map<string, KnownGroup>();
  private entries = 0;

  constructor(
    readonly records: GroupIndexRecords,
    readonly maxPartitions: number,
  ) {}

  /** Makes sure the group's commit on `topic` (a partition's topic) is indexed, before the commit is stored. */
  async indexed(topic: string, group: string, caller: Caller): Promise<void> {
    const key = groupKey(namespaceOf(topic), group);
    const known = this.known.get(key);
    if (known !== undefined && (known.unindexed || known.topics.has(topic))) return;
    const state = await this.records.add(topic, group, this.maxPartitions, caller);
    this.remember(key, group, topic, state === 'unindexed');
  }

  private remember(key: string, group: string, topic: string, unindexed: boolean): void {
    const known = this.known.get(key) ?? { group, unindexed: false, topics: new Set<string>() };
    this.known.delete(key);
    this.known.set(key, known);
    if (unindexed) {
      // Nothing more is added to an unindexed group's index: one mark stands for all its partitions.
      this.entries -= known.topics.size;
      known.topics.clear();
      known.unindexed = true;
    } else if (!known.topics.has(topic)) {
      known.topics.add(topic);
      this.entries++;
    }
    while (this.entries > MAX_KNOWN_INDEX_ENTRIES && this.known.size > 1) {
      const oldest = this.known.keys().next().value as string;
      this.forgetKey(oldest);
    }
  }

  /** Forgets that the group's entry of `topic` was written (its commit is deleted, and the entry with it). */
  forgetPartition(topic: string, group: string): void {
    const known = this.known.get(groupKey(namespaceOf(topic), group));
    if (known?.topics.delete(topic) === true) this.entries--;
  }

  /** Forgets every entry of the group in the namespace (its index is deleted). */
  forgetGroup(namespace: string, group: string): void {
    this.forgetKey(groupKey(namespace, group));
  }

  /** Forgets the groups `keep` does not keep (another gateway coordinates them now). */
  release(keep: (group: string) => boolean): void {
    for (const [key, known] of this.known) if (!keep(known.group)) this.forgetKey(key);
  }

  private forgetKey(key: string): void {
    const known = this.known.get(key);
    if (known === undefined) return;
    this.entries -= known.topics.size;
    this.known.delete(key);
  }
}

function groupKey(namespace: string, group: string): string {
  return `${namespace}\u0000${group}`;
}

/** The `tenant/namespace` a topic's index entries live in. */
export function namespaceOf(topic: string): string {
  return TopicName.parse(topic).namespaceName.toString();
}
