import { KafkaErrorCode } from '@ledgerline/kafka-protocol';
import { GroupCoordinator } from './group-coordinator.js';
import {
  COORDINATOR_SPEC_SETTINGS,
  coordinatorJoinRequest,
  coordinatorPerTest,
} from './testing/coordinator-fixture.js';
import type { JoinResult, MemberIdentity } from './group-state.js';

const joinRequest = coordinatorJoinRequest;

/** A member as a request of a dynamic member names it. */
function dynamic(memberId: string): MemberIdentity {
  return { memberId, groupInstanceId: null };
}

describe('the group coordinator', () => {
  const fixture = coordinatorPerTest();
  let coordinator: GroupCoordinator;
  beforeEach(() => (coordinator = fixture.current()));

  async function joinAll(count: number): Promise<JoinResult[]> {
    // Members joining an empty group within the initial delay form its first generation together.
    const pending = Array.from({ length: count }, () => coordinator.join(joinRequest()));
    await jest.advanceTimersByTimeAsync(100);
    return Promise.all(pending);
  }

  /** Every member of a generation syncs; the leader hands out one assignment each. */
  async function syncAll(results: JoinResult[]): Promise<number[]> {
    const leader = results.find((result) => result.memberId === result.leader)!;
    const assignments = leader.members.map((member, index) => ({
      memberId: member.memberId,
      assignment: Buffer.from([index]),
    }));
    const syncs = results.map((result) =>
      coordinator.sync(
        'g',
        result.generationId,
        dynamic(result.memberId),
        result.memberId === result.leader ? assignments : [],
      ),
    );
    return (await Promise.all(syncs)).map((sync) => sync.errorCode);
  }

  it('forms a generation of three, with one leader that sees every member', async () => {
    const results = await joinAll(3);
    expect(new Set(results.map((result) => result.generationId))).toEqual(new Set([1]));
    expect(new Set(results.map((result) => result.leader)).size).toBe(1);
    const leader = results.find((result) => result.memberId === result.leader)!;
    expect(leader.members).toHaveLength(3);
    expect(results.filter((result) => result.members.length === 0)).toHaveLength(2);
    expect(await syncAll(results)).toEqual([0, 0, 0]);
    expect(coordinator.get('g')!.phase).toBe('Stable');
  });

  it('rebalances when a member leaves and when one joins; stale generations are refused', async () => {
    const results = await joinAll(3);
    await syncAll(results);
    const [a, b, c] = results as [JoinResult, JoinResult, JoinResult];
    expect(coordinator.leave('g', [dynamic(c.memberId)])).toEqual([KafkaErrorCode.NONE]);
    expect(coordinator.heartbeat('g', a.generationId, dynamic(a.memberId))).toBe(KafkaErrorCode.REBALANCE_IN_PROGRESS);
    const rejoined = await Promise.all([
      coordinator.join(joinRequest(a.memberId)),
      coordinator.join(joinRequest(b.memberId)),
    ]);
    expect(rejoined.map((result) => result.generationId)).toEqual([2, 2]);
    expect(rejoined.find((result) => result.memberId === result.leader)!.members).toHaveLength(2);
    expect(coordinator.heartbeat('g', 1, dynamic(a.memberId))).toBe(KafkaErrorCode.ILLEGAL_GENERATION);
    expect(coordinator.canCommit('g', 1, dynamic(a.memberId))).toBe(KafkaErrorCode.ILLEGAL_GENERATION);
    await syncAll(rejoined);
    // A newcomer starts the next rebalance; the two already there rejoin after a heartbeat tells them.
    const newcomer = coordinator.join(joinRequest());
    expect(coordinator.heartbeat('g', 2, dynamic(a.memberId))).toBe(KafkaErrorCode.REBALANCE_IN_PROGRESS);
    const third = await Promise.all([
      newcomer,
      coordinator.join(joinRequest(a.memberId)),
      coordinator.join(joinRequest(b.memberId)),
    ]);
    expect(third.map((result) => result.generationId)).toEqual([3, 3, 3]);
    expect(await syncAll(third)).toEqual([0, 0, 0]);
    expect(coordinator.canCommit('g', 3, dynamic(third[0]!.memberId))).toBe(KafkaErrorCode.NONE);
  });

  it('removes a member whose session expires, and one that does not rejoin within the rebalance timeout', async () => {
    const results = await joinAll(2);
    await syncAll(results);
    const [a, b] = results as [JoinResult, JoinResult];
    await jest.advanceTimersByTimeAsync(9_000);
    expect(coordinator.heartbeat('g', 1, dynamic(a.memberId))).toBe(KafkaErrorCode.NONE);
    await jest.advanceTimersByTimeAsync(2_000);
    // b sent nothing for 11 s > its 10 s session: it is gone and a must rejoin.
    expect(coordinator.heartbeat('g', 1, dynamic(b.memberId))).toBe(KafkaErrorCode.UNKNOWN_MEMBER_ID);
    expect(coordinator.heartbeat('g', 1, dynamic(a.memberId))).toBe(KafkaErrorCode.REBALANCE_IN_PROGRESS);
    const alone = await coordinator.join(joinRequest(a.memberId));
    expect([alone.generationId, alone.leader, alone.members.length]).toEqual([2, a.memberId, 1]);
    // Now a newcomer joins and a never rejoins: after the rebalance timeout only the newcomer is left.
    await syncAll([alone]);
    const newcomer = coordinator.join(joinRequest());
    await jest.advanceTimersByTimeAsync(5_001);
    const result = await newcomer;
    expect([result.generationId, result.members.length]).toEqual([3, 1]);
    expect(coordinator.heartbeat('g', 3, dynamic(a.memberId))).toBe(KafkaErrorCode.UNKNOWN_MEMBER_ID);
  });

  it('refuses bad session timeouts, unknown members, other protocol types and groups past the limits', async () => {
    expect((await coordinator.join(joinRequest('', { sessionTimeoutMs: 1 }))).errorCode).toBe(
      KafkaErrorCode.INVALID_SESSION_TIMEOUT,
    );
    expect((await coordinator.join(joinRequest('nobody'))).errorCode).toBe(KafkaErrorCode.UNKNOWN_MEMBER_ID);
    expect((await coordinator.join(joinRequest('', { groupId: '' }))).errorCode).toBe(KafkaErrorCode.INVALID_GROUP_ID);
    await joinAll(1);
    expect((await coordinator.join(joinRequest('', { protocolType: 'connect' }))).errorCode).toBe(
      KafkaErrorCode.INCONSISTENT_GROUP_PROTOCOL,
    );
    expect((await coordinator.sync('g', 1, dynamic('nobody'), [])).errorCode).toBe(KafkaErrorCode.UNKNOWN_MEMBER_ID);
    const others = Array.from({ length: 9 }, (_, index) =>
      coordinator.join(joinRequest('', { groupId: `other-${index}` })),
    );
    expect((await coordinator.join(joinRequest('', { groupId: 'one-too-many' }))).errorCode).toBe(
      KafkaErrorCode.COORDINATOR_NOT_AVAILABLE,
    );
    // Joins still waiting for their rebalance when the coordinator closes are answered, not left hanging.
    coordinator.close();
    expect(new Set((await Promise.all(others)).map((result) => result.errorCode))).toEqual(
      new Set([KafkaErrorCode.COORDINATOR_NOT_AVAILABLE]),
    );
  });
});

describe('a group another gateway coordinates now', () => {
  afterEach(() => jest.useRealTimers());

  it('is let go: members waiting on a join are answered NOT_COORDINATOR, and the others stay', async () => {
    jest.useFakeTimers();
    const coordinator = new GroupCoordinator(COORDINATOR_SPEC_SETTINGS);
    try {
      // A join waits out the initial rebalance delay: it is pending when the group is released.
      const moving = coordinator.join(joinRequest());
      const staying = coordinator.join(joinRequest('', { groupId: 'stays' }));
      expect(coordinator.release((groupId) => groupId === 'stays')).toBe(1);
      expect(await moving).toMatchObject({ errorCode: KafkaErrorCode.NOT_COORDINATOR });
      expect(coordinator.get('g')).toBeUndefined();
      await jest.advanceTimersByTimeAsync(100);
      expect(await staying).toMatchObject({ errorCode: KafkaErrorCode.NONE });
    } finally {
      coordinator.close();
    }
  });
});
