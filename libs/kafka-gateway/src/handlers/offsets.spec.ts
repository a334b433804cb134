import { ErrorReason, LedgerlineError } from '@ledgerline/errors';
import {
  ApiKey,
  apiSpec,
  encodeConsumerAssignment,
  KafkaErrorCode,
  type DecodedRequest,
  type Message,
} from '@ledgerline/kafka-protocol';
import { SecurityReason } from '@ledgerline/security';
import { GatewayContext } from '../gateway-context.js';
import type { CommittedOffset } from '../ledgerline-backend.js';
import { ANONYMOUS } from '../owner-router.js';
import { newSession } from '../session.js';
import { MemoryGroupIndexRecords } from '../testing/memory-group-index.js';
import { handleOffsetFetch } from './offset-fetch.js';
import { handleOffsetCommit } from './offsets.js';
import { specGatewayContext } from '../testing/spec-context.js';

/** Lets every callback queued so far run: a turn of the event loop, not a guess at a time. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * The owners' cursors as a commit meets them: a commit reads the cursor's
 * reset epoch, then resets it checked against that epoch (ABORTED /
 * BAD_VERSION when another reset came between), as LedgerlineBackend's
 * commitOffset does against a writer owner.
 */
class CursorBackend {
  readonly committed = new Map<string, CommittedOffset>();
  readonly groupIndex = new MemoryGroupIndexRecords();
  /** The offsets in the order their commits were applied. */
  readonly applied: bigint[] = [];
  private readonly epochs = new Map<string, number>();
  /** Turns the first topic lookup takes, as a lookup that misses the partition-count cache does. */
  firstLookupTurns = 0;
  private lookups = 0;

  /** GetTopic as the gateway reads it: the partition count below, and an id. */
  async topic(topic: string): Promise<{ name: string; partitions: number; topicId: Buffer } | undefined> {
    const partitions = await this.partitions();
    return partitions === undefined ? undefined : { name: topic, partitions, topicId: Buffer.alloc(16, 1) };
  }

  async partitions(): Promise<number> {
    if (this.lookups++ === 0) for (let index = 0; index < this.firstLookupTurns; index++) await turn();
    return 2;
  }

  async commitOffset(topic: string, group: string, commit: CommittedOffset): Promise<void> {
    const key = `${topic} ${group}`;
    const epoch = this.epochs.get(key) ?? 0;
    await turn();
    if ((this.epochs.get(key) ?? 0) !== epoch) {
      throw new LedgerlineError(
        'ABORTED',
        ErrorReason.BAD_VERSION,
        `the cursor's reset epoch is ${this.epochs.get(key)}`,
      );
    }
    this.epochs.set(key, epoch + 1);
    this.committed.set(key, commit);
    this.applied.push(commit.offset);
  }

  /** The Kafka namespace's topics as the admin API lists them. */
  listed: string[] = [];

  async listTopics(): Promise<string[]> {
    return this.listed;
  }

  async committedOffset(topic: string, group: string): Promise<CommittedOffset> {
    return this.committed.get(`${topic} ${group}`) ?? { offset: -1n, metadata: '' };
  }
}

const session = newSession(ANONYMOUS, '127.0.0.1');

function contextOver(backend: CursorBackend): GatewayContext {
  // A group's first generation forms at once: the OffsetFetch specs join one member.
  return specGatewayContext(backend, { name: 'offsets-spec', settings: { groupInitialRebalanceDelayMs: 0 } });
}

function request(apiKey: number, apiVersion: number, body: Message): DecodedRequest {
  return { header: { apiKey, apiVersion, correlationId: 1, clientId: 'spec' }, spec: apiSpec(apiKey)!, body };
}

/** A simple commit (no generation) of one partition of `topic`. */
function commit(context: GatewayContext, topic: string, offset: bigint, metadata: string | null): Promise<Message> {
  const body = {
    groupId: 'ordered',
    generationId: -1,
    memberId: '',
    retentionTimeMs: -1n,
    topics: [
      { name: topic, partitions: [{ partitionIndex: 1, committedOffset: offset, committedMetadata: metadata }] },
    ],
  };
  return handleOffsetCommit(context, request(ApiKey.OffsetCommit, 2, body), session);
}

function errorCodes(answers: Message[]): number[] {
  return answers.map(
    (answer) => (answer['topics'] as { partitions: { errorCode: number }[] }[])[0]!.partitions[0]!.errorCode,
  );
}

describe("OffsetCommit and the group's index of committed partitions", () => {
  it('indexes a partition before its first commit, once per gateway: a steady consumer costs no index call', async () => {
    const backend = new CursorBackend();
    const context = contextOver(backend);
    for (const offset of [1n, 2n, 3n]) await commit(context, 'orders', offset, null);
    expect(backend.groupIndex.calls.add).toBe(1);
    expect(backend.groupIndex.record('public/default', 'ordered')?.entries).toEqual(
      new Set(['persistent://public/default/orders-partition-1']),
    );
    // Another gateway object (a restart) writes it once more, and finds it there.
    await commit(contextOver(backend), 'orders', 4n, null);
    expect(backend.groupIndex.calls.add).toBe(2);
    expect(backend.groupIndex.record('public/default', 'ordered')?.entries.size).toBe(1);
  });

  it('stores no commit the index could not take: a refusal is TOPIC_AUTHORIZATION_FAILED for the partition', async () => {
    const backend = new CursorBackend();
    backend.groupIndex.refusal = new LedgerlineError(
      'PERMISSION_DENIED',
      SecurityReason.PERMISSION_NOT_GRANTED,
      'no consume',
    );
    const context = contextOver(backend);
    expect(errorCodes([await commit(context, 'orders', 5n, null)])).toEqual([
      KafkaErrorCode.TOPIC_AUTHORIZATION_FAILED,
    ]);
    expect(backend.applied).toEqual([]);
  });
});

describe('OffsetCommit of one group and partition', () => {
  it('applies commits in flight together one at a time, in arrival order, the last one winning, all answered NONE', async () => {
    const backend = new CursorBackend();
    const context = contextOver(backend);
    const answers = await Promise.all([
      commit(context, 'orders', 5n, 'five'),
      commit(context, 'orders', 7n, 'seven'),
      commit(context, 'public/default/orders', 6n, 'six'),
    ]);
    expect(errorCodes(answers)).toEqual([KafkaErrorCode.NONE, KafkaErrorCode.NONE, KafkaErrorCode.NONE]);
    expect(backend.applied).toEqual([5n, 7n, 6n]);
    const fetched = await handleOffsetFetch(
      context,
      request(ApiKey.OffsetFetch, 3, { groupId: 'ordered', topics: [{ name: 'orders', partitionIndexes: [1] }] }),
      session,
    );
    expect(fetched['topics']).toEqual([
      {
        name: 'orders',
        partitions: [expect.objectContaining({ partitionIndex: 1, committedOffset: 6n, metadata: 'six' })],
      },
    ]);
  });

  it('keeps arrival order when the first commit waits on a topic lookup the second does not', async () => {
    const backend = new CursorBackend();
    backend.firstLookupTurns = 3;
    const context = contextOver(backend);
    const answers = await Promise.all([commit(context, 'slow', 1n, null), commit(context, 'slow', 2n, null)]);
    expect(errorCodes(answers)).toEqual([KafkaErrorCode.NONE, KafkaErrorCode.NONE]);
    expect(backend.applied).toEqual([1n, 2n]);
  });

  it('keeps one place in the order per group-partition with commits under way, and forgets it once they are done', async () => {
    const backend = new CursorBackend();
    const context = contextOver(backend);
    const first = commit(context, 'left', 1n, null);
    const second = commit(context, 'right', 2n, null);
    expect(context.commitOrder.size).toBe(2);
    await Promise.all([first, second]);
    expect(context.commitOrder.size).toBe(0);
  });
});

describe('OffsetFetch for all topics (null)', () => {
  it("lists the committed partitions its index names and its members' assigned ones, and no others", async () => {
    const backend = new CursorBackend();
    const context = contextOver(backend);
    try {
      const joined = await context.groups.join({
        groupId: 'ordered',
        memberId: '',
        groupInstanceId: null,
        clientId: 'spec',
        clientHost: '127.0.0.1',
        sessionTimeoutMs: 10_000,
        rebalanceTimeoutMs: 5_000,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
        requireKnownMemberId: false,
      });
      const assigned = encodeConsumerAssignment([
        { topic: 'orders', partitions: [0, 1] },
        { topic: 'clicks', partitions: [1] },
      ]);
      const member = { memberId: joined.memberId, groupInstanceId: null };
      const synced = await context.groups.sync('ordered', joined.generationId, member, [
        { memberId: joined.memberId, assignment: assigned },
      ]);
      expect(synced.errorCode).toBe(KafkaErrorCode.NONE);
      expect(errorCodes([await commit(context, 'orders', 5n, 'five')])).toEqual([KafkaErrorCode.NONE]);
      expect(errorCodes([await commit(context, 'unassigned', 9n, null)])).toEqual([KafkaErrorCode.NONE]);

      const all = await handleOffsetFetch(
        context,
        request(ApiKey.OffsetFetch, 3, { groupId: 'ordered', topics: null }),
        session,
      );
      expect(all['errorCode']).toBe(KafkaErrorCode.NONE);
      // orders-1 committed; orders-0 and clicks-1 never were; "unassigned" is no member's, but the index names it.
      expect(all['topics']).toEqual([
        {
          name: 'orders',
          partitions: [expect.objectContaining({ partitionIndex: 1, committedOffset: 5n, metadata: 'five' })],
        },
        { name: 'unassigned', partitions: [expect.objectContaining({ partitionIndex: 1, committedOffset: 9n })] },
      ]);
      const other = await handleOffsetFetch(
        context,
        request(ApiKey.OffsetFetch, 3, { groupId: 'unknown', topics: null }),
        session,
      );
      expect(other['topics']).toEqual([]);
    } finally {
      context.groups.close();
    }
  });

  it('lists what an empty group committed earlier, from its index; a partition whose commit is gone is left out', async () => {
    const backend = new CursorBackend();
    const context = contextOver(backend);
    expect(errorCodes([await commit(context, 'orders', 3n, 'three')])).toEqual([KafkaErrorCode.NONE]);
    expect(errorCodes([await commit(context, 'tenant/ns/elsewhere', 4n, null)])).toEqual([KafkaErrorCode.NONE]);
    backend.committed.set('persistent://public/default/gone-partition-1 ordered', { offset: -1n, metadata: '' });
    backend.groupIndex.records
      .get('public/default ordered')!
      .entries.add('persistent://public/default/gone-partition-1');
    const all = await handleOffsetFetch(
      context,
      request(ApiKey.OffsetFetch, 2, { groupId: 'ordered', topics: null }),
      session,
    );
    expect(all['errorCode']).toBe(KafkaErrorCode.NONE);
    // The Kafka namespace's index: a topic of another namespace is found only through a member's assignment.
    expect(all['topics']).toEqual([
      {
        name: 'orders',
        partitions: [expect.objectContaining({ partitionIndex: 1, committedOffset: 3n, metadata: 'three' })],
      },
    ]);
  });

  it('scans the namespace for a group whose index cannot say all, and answers a refused index read as Kafka', async () => {
    const backend = new CursorBackend();
    backend.groupIndex.partialNamespaces.add('public/default');
    backend.committed.set('persistent://public/default/old-partition-0 ordered', { offset: 7n, metadata: 'old' });
    backend.listed = ['persistent://public/default/old-partition-0', 'persistent://public/default/never-partition-0'];
    const context = contextOver(backend);
    const all = await handleOffsetFetch(
      context,
      request(ApiKey.OffsetFetch, 5, { groupId: 'ordered', topics: null }),
      session,
    );
    expect(all['topics']).toEqual([
      {
        name: 'old',
        partitions: [expect.objectContaining({ partitionIndex: 0, committedOffset: 7n, metadata: 'old' })],
      },
    ]);
    backend.groupIndex.refusal = new LedgerlineError('PERMISSION_DENIED', SecurityReason.PERMISSION_NOT_GRANTED, 'no');
    const refused = await handleOffsetFetch(
      context,
      request(ApiKey.OffsetFetch, 5, { groupId: 'ordered', topics: null }),
      session,
    );
    expect(refused).toEqual(
      expect.objectContaining({ errorCode: KafkaErrorCode.GROUP_AUTHORIZATION_FAILED, topics: [] }),
    );
  });
});
