import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { RawKafkaClient, type RawAnswer } from '@ledgerline/kafka-gateway/testing';
import { ApiKey, KafkaErrorCode, type Message } from '@ledgerline/kafka-protocol';
import { kafkaStandaloneRun } from './testing/kafka-standalone-run.js';

// Consumer groups as Kafka runs them (issue 42, item 5): static membership
// (KIP-345) and the cooperative-sticky assignor, with librdkafka (Debian's
// python3-confluent-kafka) as the judge, and static membership's fencing
// over the wire.

const PYTHON = '/usr/bin/python3';
const SCRIPT = join(__dirname, 'testing', 'confluent-kafka-groups.py');
const RUN_TIMEOUT_MS = 120_000;

type Event = ['assign' | 'revoke', number[]];

function groups(args: readonly string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, [SCRIPT, ...args], { timeout: RUN_TIMEOUT_MS }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`confluent-kafka ${args.join(' ')} failed: ${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout) as Record<string, unknown>);
    });
  });
}

function answerOf(answer: RawAnswer): Message {
  if (answer === 'closed') throw new Error('the gateway closed the connection');
  return answer;
}

describe('consumer groups of librdkafka against standalone', () => {
  const kafka = kafkaStandaloneRun('groups');

  it('gives a restarted static member its assignment back without revoking the other member', async () => {
    const outcome = (await groups(['static-restart', kafka.broker, 'static-restart', 'statics', 'static'])) as {
      a: Event[];
      aBeforeRestart: Event[];
      restarted: Event[];
      before: number[];
      after: number[];
    };
    // a held its partitions before b restarted (from the first generation, or the second when it was alone in the
    // first: the gateway here has no initial rebalance delay), and had none revoked or assigned from then on: the
    // restart of b was no rebalance (it was one before KIP-345 here).
    expect(outcome.aBeforeRestart.at(-1)![0]).toBe('assign');
    expect(outcome.a).toEqual([]);
    expect(outcome.restarted).toEqual([['assign', outcome.before]]);
    expect(outcome.after).toEqual(outcome.before);
  });

  it('rebalances incrementally with cooperative-sticky: the member already there gives up only what the newcomer takes', async () => {
    const outcome = (await groups(['cooperative', kafka.broker, 'cooperative', 'cooperatives'])) as {
      a: Event[];
      aHolds: number[];
      bHolds: number[];
    };
    expect(outcome.a[0]).toEqual(['assign', [0, 1, 2, 3]]);
    const revoked = outcome.a.filter(([kind]) => kind === 'revoke').flatMap(([, partitions]) => partitions);
    expect(revoked.sort()).toEqual(outcome.bHolds);
    expect(outcome.bHolds).toHaveLength(2);
    expect([...outcome.aHolds, ...outcome.bHolds].sort()).toEqual([0, 1, 2, 3]);
  });

  describe('over the wire', () => {
    let raw: RawKafkaClient;
    beforeAll(async () => {
      raw = await RawKafkaClient.open(kafka.standalone.kafka!.port);
    });
    afterAll(() => raw?.end());

    const join5 = (memberId: string, groupInstanceId: string) =>
      raw.request(ApiKey.JoinGroup, 5, {
        groupId: 'fenced',
        sessionTimeoutMs: 30_000,
        rebalanceTimeoutMs: 30_000,
        memberId,
        groupInstanceId,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
      });

    const commit7 = (member: { memberId: string; groupInstanceId: string }, offset: bigint) =>
      raw.request(ApiKey.OffsetCommit, 7, {
        groupId: 'fenced',
        generationId: 1,
        ...member,
        topics: [
          {
            name: 'fenced-topic',
            partitions: [{ partitionIndex: 0, committedOffset: offset, committedMetadata: 'm' }],
          },
        ],
      });

    const committed = async () => {
      const fetched = answerOf(
        await raw.request(ApiKey.OffsetFetch, 5, {
          groupId: 'fenced',
          topics: [{ name: 'fenced-topic', partitionIndexes: [0] }],
        }),
      );
      return (fetched['topics'] as { partitions: { committedOffset: bigint; metadata: string }[] }[])[0]!.partitions[0];
    };

    it('fences a stale static instance on Heartbeat v3, SyncGroup v3 and OffsetCommit v7, which stores nothing', async () => {
      answerOf(await raw.request(ApiKey.Metadata, 4, { topics: [{ name: 'fenced-topic' }] }));
      const first = answerOf(await join5('', 'only'));
      expect(first).toMatchObject({ errorCode: KafkaErrorCode.NONE, generationId: 1 });
      const stale = { memberId: first['memberId'] as string, groupInstanceId: 'only' };
      const assignments = [{ memberId: stale.memberId, assignment: Buffer.from('a') }];
      const sync = { groupId: 'fenced', generationId: 1, ...stale, assignments };
      expect(answerOf(await raw.request(ApiKey.SyncGroup, 3, sync))['errorCode']).toBe(KafkaErrorCode.NONE);
      expect(await commit7(stale, 5n)).toMatchObject({
        topics: [{ partitions: [{ errorCode: KafkaErrorCode.NONE }] }],
      });
      // The instance restarts: a new member id, the same generation, no rebalance.
      const restarted = answerOf(await join5('', 'only'));
      expect(restarted).toMatchObject({ errorCode: KafkaErrorCode.NONE, generationId: 1, leader: stale.memberId });
      const heartbeat = { groupId: 'fenced', generationId: 1, ...stale };
      expect(answerOf(await raw.request(ApiKey.Heartbeat, 3, heartbeat))['errorCode']).toBe(
        KafkaErrorCode.FENCED_INSTANCE_ID,
      );
      expect(answerOf(await raw.request(ApiKey.SyncGroup, 3, sync))['errorCode']).toBe(
        KafkaErrorCode.FENCED_INSTANCE_ID,
      );
      expect(await commit7(stale, 9n)).toMatchObject({
        topics: [{ partitions: [{ errorCode: KafkaErrorCode.FENCED_INSTANCE_ID }] }],
      });
      expect(await committed()).toMatchObject({ committedOffset: 5n, metadata: 'm' });
      // The new member gets the old one's assignment, and commits.
      const current = { memberId: restarted['memberId'] as string, groupInstanceId: 'only' };
      const synced = answerOf(await raw.request(ApiKey.SyncGroup, 3, { ...sync, ...current, assignments: [] }));
      expect([synced['errorCode'], (synced['assignment'] as Buffer).toString()]).toEqual([KafkaErrorCode.NONE, 'a']);
      expect(await commit7(current, 7n)).toMatchObject({
        topics: [{ partitions: [{ errorCode: KafkaErrorCode.NONE }] }],
      });
      expect(await committed()).toMatchObject({ committedOffset: 7n, metadata: 'm' });
    });

    it('leaves by group.instance.id with LeaveGroup v3, each member answered on its own', async () => {
      const left = answerOf(
        await raw.request(ApiKey.LeaveGroup, 3, {
          groupId: 'fenced',
          members: [
            { memberId: '', groupInstanceId: 'only' },
            { memberId: '', groupInstanceId: 'only' },
          ],
        }),
      );
      expect(left).toMatchObject({
        errorCode: KafkaErrorCode.NONE,
        members: [
          { groupInstanceId: 'only', errorCode: KafkaErrorCode.NONE },
          { groupInstanceId: 'only', errorCode: KafkaErrorCode.UNKNOWN_MEMBER_ID },
        ],
      });
    });
  });
});
