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
import { GroupCoordinator } from '../group-coordinator.js';
import type { CommittedOffset, LedgerlineBackend } from '../ledgerline-backend.js';
import { ANONYMOUS } from '../owner-router.js';
import { newSession } from '../session.js';
import { resolveKafkaGatewaySettings } from '../settings.js';
import { TopicNames } from '../topic-names.js';
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
    if (this.listFailure !== undefined) throw this.listFailure;
    return [...this.topics].flatMap(([topic, count]) =>
      count === 0 ? [topic] : Array.from({ length: count }, (_, index) => `${topic}-partition-${index}`),
    );
  }

  async committedOffset(topic: string, group: string): Promise<CommittedOffset> {
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

function contextOver(backend: CommitsBackend, coordinator = 1): GatewayContext {
  const settings = resolveKafkaGatewaySettings({ groupInitialRebalanceDelayMs: 0 });
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
  context.peers = { brokers: () => [self, other], coordinatorOf: () => (coordinator === 1 ? self : other) };
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
