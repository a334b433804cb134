import { KafkaErrorCode } from '@ledgerline/kafka-protocol';
import type { GroupCoordinator, JoinRequest } from './group-coordinator.js';
import { coordinatorJoinRequest, coordinatorPerTest } from './testing/coordinator-fixture.js';
import type { JoinResult, MemberIdentity } from './group-state.js';

const RANGE = { name: 'range', metadata: Buffer.from('range') };
const ROUND_ROBIN = { name: 'roundrobin', metadata: Buffer.from('roundrobin') };

function joinRequest(memberId: string, groupInstanceId: string | null, overrides: Partial<JoinRequest> = {}) {
  return coordinatorJoinRequest(memberId, { groupInstanceId, protocols: [RANGE], ...overrides });
}

function identity(result: JoinResult, groupInstanceId: string | null): MemberIdentity {
  return { memberId: result.memberId, groupInstanceId };
}

describe('static members (KIP-345)', () => {
  const fixture = coordinatorPerTest();
  let coordinator: GroupCoordinator;
  beforeEach(() => (coordinator = fixture.current()));

  /** Static members a and b (a the leader) form generation 1; a is assigned [0], b [1]. */
  async function stableGroup(protocols = [RANGE]): Promise<[JoinResult, JoinResult]> {
    const pending = ['a', 'b'].map((instance) => coordinator.join(joinRequest('', instance, { protocols })));
    await jest.advanceTimersByTimeAsync(100);
    const [a, b] = (await Promise.all(pending)) as [JoinResult, JoinResult];
    expect(a.leader).toBe(a.memberId);
    const assignments = [
      { memberId: a.memberId, assignment: Buffer.from([0]) },
      { memberId: b.memberId, assignment: Buffer.from([1]) },
    ];
    const synced = await Promise.all([
      coordinator.sync('g', 1, identity(a, 'a'), assignments),
      coordinator.sync('g', 1, identity(b, 'b'), []),
    ]);
    expect(synced.map((sync) => sync.errorCode)).toEqual([KafkaErrorCode.NONE, KafkaErrorCode.NONE]);
    return [a, b];
  }

  it.each([
    ['a follower', 'b', [1]],
    ['the leader', 'a', [0]],
  ])(
    'takes %s back after a restart with its assignment, without rebalancing the group, and fences its old id',
    async (_, instance, assignment) => {
      const [a, b] = await stableGroup();
      const old = instance === 'a' ? a : b;
      // The restart: no member id, the same group.instance.id. Answered at once, no timer advanced.
      const restarted = await coordinator.join(joinRequest('', instance));
      expect(restarted).toMatchObject({ errorCode: KafkaErrorCode.NONE, generationId: 1, protocolName: 'range' });
      expect(restarted.memberId).not.toBe(old.memberId);
      expect(restarted.memberId.startsWith(`${instance}-`)).toBe(true);
      // The leader as it was, so a restarted leader does not assign again; no member list for anyone.
      expect([restarted.leader, restarted.members]).toEqual([a.memberId, []]);
      const synced = await coordinator.sync('g', 1, identity(restarted, instance), []);
      expect([synced.errorCode, [...synced.assignment]]).toEqual([KafkaErrorCode.NONE, assignment]);
      // The other member goes on in generation 1, as does the restarted one.
      const other = instance === 'a' ? identity(b, 'b') : identity(a, 'a');
      expect(coordinator.heartbeat('g', 1, other)).toBe(KafkaErrorCode.NONE);
      expect(coordinator.heartbeat('g', 1, identity(restarted, instance))).toBe(KafkaErrorCode.NONE);
      expect(coordinator.get('g')).toMatchObject({ phase: 'Stable', generationId: 1 });
      // The old instance is fenced everywhere it names its instance, and unknown where it does not.
      const stale = identity(old, instance);
      expect(coordinator.heartbeat('g', 1, stale)).toBe(KafkaErrorCode.FENCED_INSTANCE_ID);
      expect((await coordinator.sync('g', 1, stale, [])).errorCode).toBe(KafkaErrorCode.FENCED_INSTANCE_ID);
      expect(coordinator.canCommit('g', 1, stale)).toBe(KafkaErrorCode.FENCED_INSTANCE_ID);
      expect((await coordinator.join(joinRequest(old.memberId, instance))).errorCode).toBe(
        KafkaErrorCode.FENCED_INSTANCE_ID,
      );
      expect(coordinator.leave('g', [stale])).toEqual([KafkaErrorCode.FENCED_INSTANCE_ID]);
      expect(coordinator.heartbeat('g', 1, { memberId: old.memberId, groupInstanceId: null })).toBe(
        KafkaErrorCode.UNKNOWN_MEMBER_ID,
      );
      // None of those refusals changed the group.
      expect(coordinator.get('g')).toMatchObject({ phase: 'Stable', generationId: 1 });
      expect(coordinator.get('g')!.members.size).toBe(2);
    },
  );

  it('answers a stale instance waiting on its join FENCED_INSTANCE_ID, and the rebalance goes on with the new one', async () => {
    const [a, b] = await stableGroup();
    const newcomer = coordinator.join(joinRequest('', null));
    const oldB = coordinator.join(joinRequest(b.memberId, 'b'));
    const newB = coordinator.join(joinRequest('', 'b'));
    expect(await oldB).toMatchObject({ errorCode: KafkaErrorCode.FENCED_INSTANCE_ID, memberId: b.memberId });
    const rejoinedA = coordinator.join(joinRequest(a.memberId, 'a'));
    const results = await Promise.all([rejoinedA, newB, newcomer]);
    expect(results.map((result) => [result.errorCode, result.generationId])).toEqual([
      [KafkaErrorCode.NONE, 2],
      [KafkaErrorCode.NONE, 2],
      [KafkaErrorCode.NONE, 2],
    ]);
    const leader = results[0]!;
    expect(leader.members.map((member) => member.groupInstanceId).sort()).toEqual(['a', 'b', null]);
    expect(leader.members.map((member) => member.memberId)).not.toContain(b.memberId);
  });

  it('rebalances when a restarted static member changes the protocol the group would choose', async () => {
    const [a] = await stableGroup([RANGE, ROUND_ROBIN]);
    const restarted = coordinator.join(joinRequest('', 'b', { protocols: [ROUND_ROBIN] }));
    expect(coordinator.heartbeat('g', 1, identity(a, 'a'))).toBe(KafkaErrorCode.REBALANCE_IN_PROGRESS);
    const rejoined = coordinator.join(joinRequest(a.memberId, 'a', { protocols: [RANGE, ROUND_ROBIN] }));
    const [b, again] = await Promise.all([restarted, rejoined]);
    expect([b.generationId, again.protocolName]).toEqual([2, 'roundrobin']);
  });

  it('removes a static member whose session expires; its instance then joins as a new member, by a rebalance', async () => {
    const [a, b] = await stableGroup();
    await jest.advanceTimersByTimeAsync(6_000);
    expect(coordinator.heartbeat('g', 1, identity(a, 'a'))).toBe(KafkaErrorCode.NONE);
    await jest.advanceTimersByTimeAsync(5_000);
    expect(coordinator.heartbeat('g', 1, identity(b, 'b'))).toBe(KafkaErrorCode.UNKNOWN_MEMBER_ID);
    expect(coordinator.heartbeat('g', 1, identity(a, 'a'))).toBe(KafkaErrorCode.REBALANCE_IN_PROGRESS);
    expect((await coordinator.join(joinRequest(a.memberId, 'a'))).generationId).toBe(2);
    const back = coordinator.join(joinRequest('', 'b'));
    expect(coordinator.get('g')!.phase).toBe('PreparingRebalance');
    await coordinator.join(joinRequest(a.memberId, 'a'));
    expect((await back).generationId).toBe(3);
  });

  it('leaves by group.instance.id (LeaveGroup v3), each member with its own answer, and refuses without a change', async () => {
    const [a, b] = await stableGroup();
    const answers = coordinator.leave('g', [
      { memberId: '', groupInstanceId: 'nobody' },
      { memberId: '', groupInstanceId: null },
      { memberId: a.memberId, groupInstanceId: 'b' },
    ]);
    expect(answers).toEqual([
      KafkaErrorCode.UNKNOWN_MEMBER_ID,
      KafkaErrorCode.UNKNOWN_MEMBER_ID,
      KafkaErrorCode.FENCED_INSTANCE_ID,
    ]);
    expect(coordinator.get('g')).toMatchObject({ phase: 'Stable', generationId: 1 });
    expect(coordinator.leave('g', [{ memberId: '', groupInstanceId: 'b' }])).toEqual([KafkaErrorCode.NONE]);
    expect(coordinator.heartbeat('g', 1, identity(b, 'b'))).toBe(KafkaErrorCode.UNKNOWN_MEMBER_ID);
    expect(coordinator.heartbeat('g', 1, identity(a, 'a'))).toBe(KafkaErrorCode.REBALANCE_IN_PROGRESS);
    expect(coordinator.leave('g', [{ memberId: '', groupInstanceId: 'b' }])).toEqual([
      KafkaErrorCode.UNKNOWN_MEMBER_ID,
    ]);
    expect(coordinator.leave('other', [identity(a, 'a')])).toEqual([KafkaErrorCode.UNKNOWN_MEMBER_ID]);
  });
});
