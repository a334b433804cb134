import { KafkaErrorCode } from '@ledgerline/kafka-protocol';
import type { GroupCoordinator } from './group-coordinator.js';
import type { JoinResult } from './group-state.js';
import {
  COORDINATOR_SPEC_SETTINGS,
  coordinatorJoinRequest,
  coordinatorPerTest,
} from './testing/coordinator-fixture.js';

// JoinGroup v4+ (KIP-394): a dynamic member joining without an id is given one with MEMBER_ID_REQUIRED and is a
// member only once it joins with it; the ids given and not joined with are bounded and expire. And SyncGroup v5's
// protocol check (KIP-559).

/** A JoinGroup as v4+ sends it: MEMBER_ID_REQUIRED for a dynamic member without an id. */
function joinV4(memberId = '', groupInstanceId: string | null = null) {
  return coordinatorJoinRequest(memberId, { groupInstanceId, requireKnownMemberId: true });
}

describe('MEMBER_ID_REQUIRED (JoinGroup v4+)', () => {
  const fixture = coordinatorPerTest();
  let coordinator: GroupCoordinator;
  beforeEach(() => (coordinator = fixture.current()));

  /** Joins with the id MEMBER_ID_REQUIRED gave, past the group's initial rebalance delay. */
  async function joinWith(memberId: string): Promise<JoinResult> {
    const joining = coordinator.join(joinV4(memberId));
    await jest.advanceTimersByTimeAsync(COORDINATOR_SPEC_SETTINGS.groupInitialRebalanceDelayMs);
    return joining;
  }

  it('gives a dynamic member an id without adding it, then takes it in when it joins with that id', async () => {
    const required = await coordinator.join(joinV4());
    expect(required).toMatchObject({ errorCode: KafkaErrorCode.MEMBER_ID_REQUIRED, generationId: -1, members: [] });
    expect(required.memberId).toMatch(/^c-/);
    expect(coordinator.get('g')!.members.size).toBe(0);
    const joined = await joinWith(required.memberId);
    expect(joined).toMatchObject({
      errorCode: KafkaErrorCode.NONE,
      generationId: 1,
      memberId: required.memberId,
      leader: required.memberId,
      protocolType: 'consumer',
      protocolName: 'range',
    });
    expect([...coordinator.get('g')!.members.keys()]).toEqual([required.memberId]);
    expect(coordinator.get('g')!.pendingMembers.size).toBe(0);
  });

  it('adds no member for a join retried without an id: only the id joined with becomes one', async () => {
    const first = await coordinator.join(joinV4());
    const second = await coordinator.join(joinV4());
    expect(second.memberId).not.toBe(first.memberId);
    await joinWith(second.memberId);
    expect([...coordinator.get('g')!.members.keys()]).toEqual([second.memberId]);
  });

  it('asks a static member (group.instance.id) for nothing: it joins at once', async () => {
    const joining = coordinator.join(joinV4('', 'instance-a'));
    await jest.advanceTimersByTimeAsync(COORDINATOR_SPEC_SETTINGS.groupInitialRebalanceDelayMs);
    expect(await joining).toMatchObject({ errorCode: KafkaErrorCode.NONE, generationId: 1 });
    expect(coordinator.get('g')!.staticMembers.get('instance-a')).toBe((await joining).memberId);
  });

  it('still joins a member without an id at once before v4', async () => {
    const joining = coordinator.join(coordinatorJoinRequest(''));
    await jest.advanceTimersByTimeAsync(COORDINATOR_SPEC_SETTINGS.groupInitialRebalanceDelayMs);
    expect(await joining).toMatchObject({ errorCode: KafkaErrorCode.NONE, generationId: 1 });
  });

  it('forgets an id not joined with within the session timeout: joining with it then is UNKNOWN_MEMBER_ID', async () => {
    const required = await coordinator.join(joinV4());
    const sessionTimeoutMs = joinV4().sessionTimeoutMs;
    await jest.advanceTimersByTimeAsync(sessionTimeoutMs - 1);
    expect(coordinator.get('g')!.pendingMembers.size).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(coordinator.get('g')!.pendingMembers.size).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
    expect(await coordinator.join(joinV4(required.memberId))).toMatchObject({
      errorCode: KafkaErrorCode.UNKNOWN_MEMBER_ID,
    });
  });

  it('holds at most maxGroupMembers ids per group, dropping the oldest for a new one', async () => {
    const ids: string[] = [];
    for (let index = 0; index <= COORDINATOR_SPEC_SETTINGS.maxGroupMembers; index++) {
      ids.push((await coordinator.join(joinV4())).memberId);
    }
    const group = coordinator.get('g')!;
    expect([...group.pendingMembers.keys()]).toEqual(ids.slice(1));
    // One expiry timer per id held: the dropped one's is cleared.
    expect(jest.getTimerCount()).toBe(COORDINATOR_SPEC_SETTINGS.maxGroupMembers);
    expect(await coordinator.join(joinV4(ids[0]))).toMatchObject({ errorCode: KafkaErrorCode.UNKNOWN_MEMBER_ID });
    expect(await joinWith(ids[1]!)).toMatchObject({ errorCode: KafkaErrorCode.NONE, memberId: ids[1] });
  });

  it('clears the pending ids of a group deleted, and of every group when it closes', async () => {
    await coordinator.join(joinV4());
    expect(coordinator.forget('g')).toBe(true);
    expect(jest.getTimerCount()).toBe(0);
    await coordinator.join(joinV4());
    coordinator.close();
    expect(jest.getTimerCount()).toBe(0);
  });
});

describe('SyncGroup v5: the protocol type and name', () => {
  const fixture = coordinatorPerTest();
  let coordinator: GroupCoordinator;
  beforeEach(() => (coordinator = fixture.current()));

  async function leader(): Promise<JoinResult> {
    const joining = coordinator.join(coordinatorJoinRequest(''));
    await jest.advanceTimersByTimeAsync(COORDINATOR_SPEC_SETTINGS.groupInitialRebalanceDelayMs);
    return joining;
  }

  it.each([
    ['another protocol name', { type: 'consumer', name: 'roundrobin' }],
    ['another protocol type', { type: 'connect', name: 'range' }],
  ])('answers INCONSISTENT_GROUP_PROTOCOL to %s, and assigns nothing', async (_what, protocol) => {
    const member = await leader();
    const identity = { memberId: member.memberId, groupInstanceId: null };
    const assignments = [{ memberId: member.memberId, assignment: Buffer.from([1]) }];
    expect(await coordinator.sync('g', 1, identity, assignments, protocol)).toEqual({
      errorCode: KafkaErrorCode.INCONSISTENT_GROUP_PROTOCOL,
      assignment: Buffer.alloc(0),
    });
    expect(coordinator.get('g')!.phase).toBe('CompletingRebalance');
  });

  it("answers the group's protocol type and name with the assignment, named or not (before v5)", async () => {
    const member = await leader();
    const identity = { memberId: member.memberId, groupInstanceId: null };
    const assignments = [{ memberId: member.memberId, assignment: Buffer.from([1]) }];
    const synced = await coordinator.sync('g', 1, identity, assignments, { type: 'consumer', name: 'range' });
    const expected = {
      errorCode: KafkaErrorCode.NONE,
      assignment: Buffer.from([1]),
      protocolType: 'consumer',
      protocolName: 'range',
    };
    expect(synced).toEqual(expected);
    expect(await coordinator.sync('g', 1, identity, [])).toEqual(expected);
  });
});
