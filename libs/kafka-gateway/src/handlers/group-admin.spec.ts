import { LedgerlineError } from '@ledgerline/errors';
import {
  ApiKey,
  apiSpec,
  encodeConsumerSubscription,
  KafkaErrorCode,
  type DecodedRequest,
  type Message,
} from '@ledgerline/kafka-protocol';
import { OwnerReason } from '@ledgerline/ownership';
import { RpcReason } from '@ledgerline/rpc';
import { SecurityReason } from '@ledgerline/security';
import { createLogger } from '@ledgerline/service-kit';
import { GatewayContext } from '../gateway-context.js';
import { soloPeers } from '../gateway-peers.js';
import { GroupCoordinator } from '../group-coordinator.js';
import type { CommittedOffset, LedgerlineBackend } from '../ledgerline-backend.js';
import { ANONYMOUS } from '../owner-router.js';
import { newSession } from '../session.js';
import { resolveKafkaGatewaySettings, type KafkaGatewaySettings } from '../settings.js';
import { TopicNames } from '../topic-names.js';
import { MemoryGroupIndexRecords } from '../testing/memory-group-index.js';
import { handleDeleteGroups, handleOffsetDelete } from './group-admin.js';
import { handleOffsetCommit } from './offsets.js';

const HOME = 'persistent://public/default';
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * The Kafka namespace's topics and the groups' commits on them, as the
 * handlers meet them through LedgerlineBackend: a commit is a cursor with the
 * committed-offset property, found by topic; a deletion unsubscribes it.
 */
class CommitsBackend {
  /** Partition counts of the namespace's topics, by Ledgerline topic (0: not partitioned). */
  readonly topics = new Map<string, number>();
  /**
   * The groups' indexes. The namespace starts partial, as one created before the index, since most specs here
   * put their commits in place directly, without OffsetCommit: those are commits made before the index existed.
   */
  readonly groupIndex = new MemoryGroupIndexRecords();
  /** Cursors read (committedOffset) and namespace listings: what finding a group's commits cost. */
  cursorReads = 0;
  listings = 0;

  constructor(indexedSinceCreation = false) {
    if (!indexedSinceCreation) this.groupIndex.partialNamespaces.add('public/default');
  }
  /** Commits by `<partition topic> <group>`. */
  readonly commits = new Map<string, bigint>();
  /** Deletions in the order they were applied. */
  readonly deleted: string[] = [];
  listFailure: LedgerlineError | undefined;
  deleteFailure: LedgerlineError | undefined;

  /** GetTopic as the gateway reads it: the partition count below, and an id. */
  async topic(topic: string): Promise<{ name: string; partitions: number; topicId: Buffer } | undefined> {
    const partitions = await this.partitions(topic);
    return partitions === undefined ? undefined : { name: topic, partitions, topicId: Buffer.alloc(16, 1) };
  }

  async partitions(topic: string): Promise<number | undefined> {
    return this.topics.get(topic);
  }

  async listTopics(): Promise<string[]> {
    this.listings++;
    if (this.listFailure !== undefined) throw this.listFailure;
    return [...this.topics].flatMap(([topic, count]) =>
      count === 0 ? [topic] : Array.from({ length: count }, (_, index) => `${topic}-partition-${index}`),
    );
  }

  async committedOffset(topic: string, group: string): Promise<CommittedOffset> {
    this.cursorReads++;
    return { offset: this.commits.get(`${topic} ${group}`) ?? -1n, metadata: '' };
  }

  /** Turns a commit takes to be stored: more than a deletion takes, so one that did not wait for it would win. */
  commitTurns = 1;

  async commitOffset(topic: string, group: string, commit: CommittedOffset): Promise<void> {
    for (let index = 0; index < this.commitTurns; index++) await turn();
    this.commits.set(`${topic} ${group}`, commit.offset);
  }

  async deleteCommit(topic: string, group: string): Promise<boolean> {
    await turn();
    if (this.deleteFailure !== undefined) throw this.deleteFailure;
    this.deleted.push(`${topic} ${group}`);
    return this.commits.delete(`${topic} ${group}`);
  }
}

const session = newSession(ANONYMOUS, '127.0.0.1');

function contextOver(
  backend: CommitsBackend,
  coordinator = 1,
  overrides: Partial<KafkaGatewaySettings> = {},
): GatewayContext {
  const settings = resolveKafkaGatewaySettings({ groupInitialRebalanceDelayMs: 0, ...overrides });
  const self = { nodeId: 1, host: 'localhost', port: 9092 };
  const context = new GatewayContext(
    settings,
    backend as unknown as LedgerlineBackend,
    new TopicNames({ tenant: 'public', namespace: 'default' }),
    new GroupCoordinator(settings),
    () => self,
    createLogger('group-admin-spec', { level: 'silent' }),
  );
  const other = { nodeId: 2, host: 'localhost', port: 9093 };
  context.peers = {
    ...soloPeers(() => self),
    brokers: () => [self, other],
    coordinatorOf: () => (coordinator === 1 ? self : other),
  };
  return context;
}

function request(apiKey: number, apiVersion: number, body: Message): DecodedRequest {
  return { header: { apiKey, apiVersion, correlationId: 1, clientId: 'spec' }, spec: apiSpec(apiKey)!, body };
}

async function deleteGroups(context: GatewayContext, ...groups: string[]): Promise<number[]> {
  const answer = await handleDeleteGroups(context, request(ApiKey.DeleteGroups, 2, { groupsNames: groups }), session);
  return (answer['results'] as { errorCode: number }[]).map((result) => result.errorCode);
}

/** OffsetDelete v0 of partition 0 of each topic: the top-level error and each partition's. */
async function offsetDelete(context: GatewayContext, group: string, ...topics: string[]): Promise<[number, number[]]> {
  const body = { groupId: group, topics: topics.map((name) => ({ name, partitions: [{ partitionIndex: 0 }] })) };
  const answer = await handleOffsetDelete(context, request(ApiKey.OffsetDelete, 0, body), session);
  const partitions = (answer['topics'] as { partitions: { errorCode: number }[] }[]).map(
    (topic) => topic.partitions[0]!.errorCode,
  );
  return [answer['errorCode'] as number, partitions];
}

/** A member of `group` in the coordinator, subscribed (its JoinGroup metadata) as given. */
async function member(context: GatewayContext, group: string, protocolType: string, metadata: Buffer): Promise<void> {
  const joined = await context.groups.join({
    groupId: group,
    memberId: '',
    groupInstanceId: null,
    clientId: 'spec',
    clientHost: '127.0.0.1',
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 5_000,
    protocolType,
    protocols: [{ name: 'range', metadata }],
    requireKnownMemberId: false,
  });
  expect(joined.errorCode).toBe(KafkaErrorCode.NONE);
}

describe('DeleteGroups', () => {
  it('deletes the commits found on every topic of the namespace and answers a second deletion GROUP_ID_NOT_FOUND', async () => {
    const backend = new CommitsBackend();
    backend.topics.set(`${HOME}/orders`, 2).set(`${HOME}/single`, 0);
    backend.commits.set(`${HOME}/orders-partition-1 billing`, 4n).set(`${HOME}/single billing`, 1n);
    backend.commits.set(`${HOME}/orders-partition-1 audit`, 2n);
    const context = contextOver(backend);
    expect(await deleteGroups(context, 'billing')).toEqual([KafkaErrorCode.NONE]);
    expect([...backend.commits.keys()]).toEqual([`${HOME}/orders-partition-1 audit`]);
    expect(await deleteGroups(context, 'billing', 'never')).toEqual([
      KafkaErrorCode.GROUP_ID_NOT_FOUND,
      KafkaErrorCode.GROUP_ID_NOT_FOUND,
    ]);
  });

  it("answers as Kafka's coordinator: NOT_COORDINATOR elsewhere, NON_EMPTY_GROUP with members or SDK consumers", async () => {
    const backend = new CommitsBackend();
    backend.topics.set(`${HOME}/orders`, 1);
    backend.commits.set(`${HOME}/orders-partition-0 billing`, 4n);
    expect(await deleteGroups(contextOver(backend, 2), 'billing')).toEqual([KafkaErrorCode.NOT_COORDINATOR]);
    const context = contextOver(backend);
    try {
      await member(context, 'billing', 'consumer', encodeConsumerSubscription(['orders']));
      expect(await deleteGroups(context, 'billing')).toEqual([KafkaErrorCode.NON_EMPTY_GROUP]);
    } finally {
      context.groups.close();
    }
    backend.deleteFailure = new LedgerlineError('FAILED_PRECONDITION', OwnerReason.SUBSCRIPTION_BUSY, 'consumers');
    expect(await deleteGroups(contextOver(backend), 'billing')).toEqual([KafkaErrorCode.NON_EMPTY_GROUP]);
    expect(backend.commits.size).toBe(1);
  });

  it('answers a refused listing GROUP_AUTHORIZATION_FAILED and an unreachable one COORDINATOR_NOT_AVAILABLE', async () => {
    const backend = new CommitsBackend();
    backend.listFailure = new LedgerlineError(
      'PERMISSION_DENIED',
      SecurityReason.PERMISSION_NOT_GRANTED,
      'not an admin',
    );
    expect(await deleteGroups(contextOver(backend), 'billing')).toEqual([KafkaErrorCode.GROUP_AUTHORIZATION_FAILED]);
    backend.listFailure = new LedgerlineError('UNAVAILABLE', RpcReason.TRANSPORT_UNAVAILABLE, 'restarting');
    expect(await deleteGroups(contextOver(backend), 'billing')).toEqual([KafkaErrorCode.COORDINATOR_NOT_AVAILABLE]);
  });

  it('applies a commit in flight before a deletion that arrived after it, so the deletion wins', async () => {
    const backend = new CommitsBackend();
    backend.topics.set(`${HOME}/orders`, 1);
    backend.commits.set(`${HOME}/orders-partition-0 billing`, 1n);
    backend.commitTurns = 20;
    const context = contextOver(backend);
    const commitBody = {
      groupId: 'billing',
      generationId: -1,
      memberId: '',
      retentionTimeMs: -1n,
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 9n, committedMetadata: null }] }],
    };
    const committing = handleOffsetCommit(context, request(ApiKey.OffsetCommit, 2, commitBody), session);
    expect(await deleteGroups(context, 'billing')).toEqual([KafkaErrorCode.NONE]);
    await committing;
    expect(backend.commits.size).toBe(0);
  });
});

describe('OffsetDelete', () => {
  it('refuses a group of another protocol with members (NON_EMPTY_GROUP) and treats an unreadable subscription as every topic', async () => {
    const backend = new CommitsBackend();
    backend.topics.set(`${HOME}/orders`, 1).set(`${HOME}/clicks`, 1);
    const context = contextOver(backend);
    try {
      await member(context, 'connectors', 'connect', Buffer.from('worker'));
      expect(await offsetDelete(context, 'connectors', 'orders')).toEqual([KafkaErrorCode.NON_EMPTY_GROUP, []]);
      await member(context, 'odd', 'consumer', Buffer.from([0, 0, 0x7f]));
      expect(await offsetDelete(context, 'odd', 'orders', 'clicks')).toEqual([
        KafkaErrorCode.NONE,
        [KafkaErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, KafkaErrorCode.GROUP_SUBSCRIBED_TO_TOPIC],
      ]);
      await member(context, 'readers', 'consumer', encodeConsumerSubscription(['public/default/orders']));
      expect(await offsetDelete(context, 'readers', 'orders', 'clicks', 'missing')).toEqual([
        KafkaErrorCode.NONE,
        [KafkaErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, KafkaErrorCode.NONE, KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      ]);
      expect(backend.deleted).toEqual([`${HOME}/clicks-partition-0 readers`]);
    } finally {
      context.groups.close();
    }
  });

  it('answers a refused deletion TOPIC_AUTHORIZATION_FAILED, an SDK-read subscription GROUP_SUBSCRIBED_TO_TOPIC, a bad name UNKNOWN_TOPIC_OR_PARTITION', async () => {
    const backend = new CommitsBackend();
    backend.topics.set(`${HOME}/orders`, 1);
    backend.commits.set(`${HOME}/orders-partition-0 billing`, 4n);
    const context = contextOver(backend);
    backend.deleteFailure = new LedgerlineError(
      'PERMISSION_DENIED',
      SecurityReason.PERMISSION_NOT_GRANTED,
      'no consume right',
    );
    expect(await offsetDelete(context, 'billing', 'orders', 'bad name!')).toEqual([
      KafkaErrorCode.NONE,
      [KafkaErrorCode.TOPIC_AUTHORIZATION_FAILED, KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    ]);
    backend.deleteFailure = new LedgerlineError('FAILED_PRECONDITION', OwnerReason.SUBSCRIPTION_BUSY, 'consumers');
    expect(await offsetDelete(context, 'billing', 'orders')).toEqual([
      KafkaErrorCode.NONE,
      [KafkaErrorCode.GROUP_SUBSCRIBED_TO_TOPIC],
    ]);
    expect(backend.commits.size).toBe(1);
  });

  it('finds a group by a commit outside the partitions asked for, and answers NOT_COORDINATOR elsewhere', async () => {
    const backend = new CommitsBackend();
    backend.topics.set(`${HOME}/orders`, 1).set(`${HOME}/clicks`, 1);
    backend.commits.set(`${HOME}/clicks-partition-0 billing`, 4n);
    expect(await offsetDelete(contextOver(backend), 'billing', 'orders')).toEqual([
      KafkaErrorCode.NONE,
      [KafkaErrorCode.NONE],
    ]);
    expect(backend.commits.size).toBe(1);
    expect(await offsetDelete(contextOver(backend), 'nobody', 'orders')).toEqual([
      KafkaErrorCode.GROUP_ID_NOT_FOUND,
      [],
    ]);
    expect(await offsetDelete(contextOver(backend, 2), 'billing', 'orders')).toEqual([
      KafkaErrorCode.NOT_COORDINATOR,
      [],
    ]);
  });
});

/** OffsetCommit (no generation) of `partitions` of `topic` for `group`: what a simple consumer or an admin tool sends. */
async function commitThrough(context: GatewayContext, group: string, topic: string, ...partitions: number[]) {
  const body = {
    groupId: group,
    generationId: -1,
    memberId: '',
    retentionTimeMs: -1n,
    topics: [
      {
        name: topic,
        partitions: partitions.map((partitionIndex) => ({
          partitionIndex,
          committedOffset: 1n,
          committedMetadata: null,
        })),
      },
    ],
  };
  const answer = await handleOffsetCommit(context, request(ApiKey.OffsetCommit, 2, body), session);
  const codes = (answer['topics'] as { partitions: { errorCode: number }[] }[])[0]!.partitions.map((p) => p.errorCode);
  expect(codes).toEqual(partitions.map(() => KafkaErrorCode.NONE));
}

/** A namespace of `count` topics of 2 partitions each, as many as a scan would read. */
function manyTopics(backend: CommitsBackend, count: number): void {
  for (let index = 0; index < count; index++) backend.topics.set(`${HOME}/t${index}`, 2);
}

describe("DeleteGroups and OffsetDelete through the group's index of committed partitions", () => {
  it('reads only the indexed partitions of a group that committed through the gateway, however large the namespace', async () => {
    const backend = new CommitsBackend(true);
    manyTopics(backend, 100);
    const context = contextOver(backend);
    await commitThrough(context, 'billing', 't7', 0, 1);
    await commitThrough(context, 'audit', 't7', 1);
    backend.cursorReads = 0;
    expect(await deleteGroups(context, 'billing')).toEqual([KafkaErrorCode.NONE]);
    expect(backend.listings).toBe(0);
    // Two partitions: their cursors, not the namespace's 200.
    expect(backend.cursorReads).toBe(0);
    expect(backend.deleted).toEqual([`${HOME}/t7-partition-0 billing`, `${HOME}/t7-partition-1 billing`]);
    expect([...backend.commits.keys()]).toEqual([`${HOME}/t7-partition-1 audit`]);
    // Nothing of the group is left in the metadata store, and a second deletion finds nothing, still without a scan.
    expect(backend.groupIndex.record('public/default', 'billing')).toBeUndefined();
    expect(await deleteGroups(context, 'billing')).toEqual([KafkaErrorCode.GROUP_ID_NOT_FOUND]);
    expect(backend.listings).toBe(0);
  });

  it('finds the index from a new gateway object (a restart), and writes a commit after a deletion into it again', async () => {
    const backend = new CommitsBackend(true);
    manyTopics(backend, 50);
    await commitThrough(contextOver(backend), 'billing', 't3', 1);
    const restarted = contextOver(backend);
    expect(await deleteGroups(restarted, 'billing')).toEqual([KafkaErrorCode.NONE]);
    expect(backend.commits.size).toBe(0);
    expect(backend.listings).toBe(0);
    // The gateway forgot what it knew of the deleted group: its next commit is indexed again.
    await commitThrough(restarted, 'billing', 't3', 1);
    expect(await deleteGroups(contextOver(backend), 'billing')).toEqual([KafkaErrorCode.NONE]);
    expect(backend.commits.size).toBe(0);
  });

  it('finds a group that committed before the index by one last scan, indexes what it found and marks it complete', async () => {
    const backend = new CommitsBackend();
    manyTopics(backend, 20);
    backend.commits.set(`${HOME}/t4-partition-0 billing`, 1n).set(`${HOME}/t9-partition-1 billing`, 1n);
    const context = contextOver(backend);
    // Not a partition the group committed on: the group is looked for, by the last scan.
    expect(await offsetDelete(context, 'billing', 't0')).toEqual([KafkaErrorCode.NONE, [KafkaErrorCode.NONE]]);
    expect(backend.listings).toBe(1);
    expect(backend.groupIndex.record('public/default', 'billing')).toMatchObject({
      state: 'complete',
      entries: new Set([`${HOME}/t4-partition-0`, `${HOME}/t9-partition-1`]),
    });
    backend.cursorReads = 0;
    expect(await offsetDelete(context, 'billing', 't1')).toEqual([KafkaErrorCode.NONE, [KafkaErrorCode.NONE]]);
    expect(await deleteGroups(context, 'billing')).toEqual([KafkaErrorCode.NONE]);
    expect(backend.listings).toBe(1);
    expect(backend.cursorReads).toBe(2);
    expect(backend.commits.size).toBe(0);
    expect(backend.groupIndex.record('public/default', 'billing')).toBeUndefined();
  });

  it('deletes a group that committed before the index whole by the last scan, leaving no record', async () => {
    const backend = new CommitsBackend();
    manyTopics(backend, 5);
    backend.commits.set(`${HOME}/t1-partition-0 billing`, 1n);
    const context = contextOver(backend);
    await commitThrough(context, 'billing', 't2', 0);
    expect(await deleteGroups(context, 'billing')).toEqual([KafkaErrorCode.NONE]);
    expect(backend.listings).toBe(1);
    expect(backend.commits.size).toBe(0);
    expect(backend.groupIndex.records.size).toBe(0);
  });

  it('marks a group past kafkaMaxIndexedPartitionsPerGroup unindexed, and still deletes it whole by scanning', async () => {
    const backend = new CommitsBackend(true);
    manyTopics(backend, 10);
    const context = contextOver(backend, 1, { kafkaMaxIndexedPartitionsPerGroup: 3 });
    await commitThrough(context, 'wide', 't0', 0, 1);
    await commitThrough(context, 'wide', 't1', 0, 1);
    await commitThrough(context, 'wide', 't2', 0, 1);
    expect(backend.groupIndex.record('public/default', 'wide')?.state).toBe('unindexed');
    // Once marked, this gateway adds nothing more for the group.
    const adds = backend.groupIndex.calls.add;
    await commitThrough(context, 'wide', 't3', 0);
    expect(backend.groupIndex.calls.add).toBe(adds);
    expect(await deleteGroups(context, 'wide')).toEqual([KafkaErrorCode.NONE]);
    expect(backend.listings).toBe(1);
    expect(backend.commits.size).toBe(0);
    expect(backend.groupIndex.records.size).toBe(0);
  });

  it('answers OffsetDelete of a group the coordinator does not know through the index: found without a scan, or GROUP_ID_NOT_FOUND', async () => {
    const backend = new CommitsBackend(true);
    manyTopics(backend, 50);
    const context = contextOver(backend);
    await commitThrough(context, 'billing', 't8', 0);
    backend.cursorReads = 0;
    expect(await offsetDelete(context, 'billing', 't0')).toEqual([KafkaErrorCode.NONE, [KafkaErrorCode.NONE]]);
    expect(await offsetDelete(context, 'nobody', 't0')).toEqual([KafkaErrorCode.GROUP_ID_NOT_FOUND, []]);
    expect(backend.listings).toBe(0);
    // t0's cursor asked twice (once per request), t8's once.
    expect(backend.cursorReads).toBe(3);
    // Deleting the group's last commit removes its entry, and the group is then unknown.
    expect(await offsetDelete(context, 'billing', 't8')).toEqual([KafkaErrorCode.NONE, [KafkaErrorCode.NONE]]);
    expect(backend.groupIndex.record('public/default', 'billing')?.entries.size).toBe(0);
    expect(await offsetDelete(context, 'billing', 't8')).toEqual([KafkaErrorCode.GROUP_ID_NOT_FOUND, []]);
  });

  it('answers an index the caller may not read GROUP_AUTHORIZATION_FAILED, and an unreachable one COORDINATOR_NOT_AVAILABLE', async () => {
    const backend = new CommitsBackend(true);
    backend.topics.set(`${HOME}/orders`, 1);
    const context = contextOver(backend);
    await commitThrough(context, 'billing', 'orders', 0);
    backend.groupIndex.refusal = new LedgerlineError('PERMISSION_DENIED', SecurityReason.PERMISSION_NOT_GRANTED, 'no');
    expect(await deleteGroups(context, 'billing')).toEqual([KafkaErrorCode.GROUP_AUTHORIZATION_FAILED]);
    expect(await offsetDelete(context, 'billing', 'nothing-here')).toEqual([
      KafkaErrorCode.GROUP_AUTHORIZATION_FAILED,
      [],
    ]);
    backend.groupIndex.refusal = new LedgerlineError('UNAVAILABLE', RpcReason.TRANSPORT_UNAVAILABLE, 'restarting');
    expect(await deleteGroups(context, 'billing')).toEqual([KafkaErrorCode.COORDINATOR_NOT_AVAILABLE]);
    expect(backend.commits.size).toBe(1);
  });
});
