import { KafkaErrorCode } from '@ledgerline/kafka-protocol';
import type { GroupCoordinator, JoinRequest } from './group-coordinator.js';
import { coordinatorJoinRequest, coordinatorPerTest } from './testing/coordinator-fixture.js';
import type { JoinResult, MemberIdentity } from './group-state.js';

function protocol(name: string, metadata = name): { name: string; metadata: Buffer } {
  return { name, metadata: Buffer.from(metadata) };
}

function joinRequest(memberId: string, protocols: { name: string; metadata: Buffer }[]): JoinRequest {
  return coordinatorJoinRequest(memberId, { protocols });
}

function dynamic(result: JoinResult): MemberIdentity {
  return { memberId: result.memberId, groupInstanceId: null };
}

describe("a group's protocol across members with several", () => {
  const fixture = coordinatorPerTest();
  let coordinator: GroupCoordinator;
  beforeEach(() => (coordinator = fixture.current()));

  async function form(...members: { name: string; metadata: Buffer }[][]): Promise<JoinResult[]> {
    const pending = members.map((protocols) => coordinator.join(joinRequest('', protocols)));
    await jest.advanceTimersByTimeAsync(100);
    return Promise.all(pending);
  }

  it("is the one most members prefer among those all support (Kafka's vote), not just the leader's first", async () => {
    const results = await form(
      [protocol('range'), protocol('roundrobin')],
      [protocol('roundrobin'), protocol('range')],
      [protocol('sticky'), protocol('roundrobin'), protocol('range')],
    );
    expect(results.map((result) => result.protocolName)).toEqual(['roundrobin', 'roundrobin', 'roundrobin']);
    // The leader is given each member's metadata of that protocol.
    const leader = results.find((result) => result.memberId === result.leader)!;
    expect(leader.members.map((member) => member.metadata.toString())).toEqual([
      'roundrobin',
      'roundrobin',
      'roundrobin',
    ]);
  });

  it('refuses a member that shares no protocol with the group, or names none, with INCONSISTENT_GROUP_PROTOCOL', async () => {
    const [a] = await form([protocol('range'), protocol('roundrobin')]);
    expect((await coordinator.join(joinRequest('', [protocol('sticky')]))).errorCode).toBe(
      KafkaErrorCode.INCONSISTENT_GROUP_PROTOCOL,
    );
    expect((await coordinator.join(joinRequest('', []))).errorCode).toBe(KafkaErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    // A member may change its own protocols: its earlier ones do not count against it.
    const changed = coordinator.join(joinRequest(a!.memberId, [protocol('cooperative-sticky')]));
    expect((await changed).protocolName).toBe('cooperative-sticky');
    expect(coordinator.get('g')!.members.size).toBe(1);
    expect((await coordinator.join({ ...joinRequest('', []), groupId: 'fresh' })).errorCode).toBe(
      KafkaErrorCode.INCONSISTENT_GROUP_PROTOCOL,
    );
  });

  it('takes a follower rejoining a Stable group unchanged back into its generation; a changed one or the leader rebalances it', async () => {
    const [a, b] = (await form(
      [protocol('cooperative-sticky', 'owns 0,1')],
      [protocol('cooperative-sticky', 'owns -')],
    )) as [JoinResult, JoinResult];
    const follower = a.memberId === a.leader ? b : a;
    const leader = a.memberId === a.leader ? a : b;
    const assignments = [leader, follower].map((result) => ({
      memberId: result.memberId,
      assignment: Buffer.alloc(0),
    }));
    await Promise.all([
      coordinator.sync('g', 1, dynamic(leader), assignments),
      coordinator.sync('g', 1, dynamic(follower), []),
    ]);
    const followerProtocols = coordinator.get('g')!.members.get(follower.memberId)!.protocols;
    const same = await coordinator.join(joinRequest(follower.memberId, followerProtocols));
    expect([same.generationId, same.leader, same.members]).toEqual([1, leader.memberId, []]);
    expect(coordinator.get('g')!.phase).toBe('Stable');
    // A cooperative member that gave partitions up rejoins with what it owns now: the group rebalances.
    const changed = coordinator.join(joinRequest(follower.memberId, [protocol('cooperative-sticky', 'owns 1')]));
    expect(coordinator.heartbeat('g', 1, dynamic(leader))).toBe(KafkaErrorCode.REBALANCE_IN_PROGRESS);
    const leaderRejoined = coordinator.join(joinRequest(leader.memberId, [protocol('cooperative-sticky', 'owns 0')]));
    expect((await Promise.all([changed, leaderRejoined])).map((result) => result.generationId)).toEqual([2, 2]);
    await Promise.all([
      coordinator.sync('g', 2, dynamic(leader), assignments),
      coordinator.sync('g', 2, dynamic(follower), []),
    ]);
    // The leader's JoinGroup in a Stable group rebalances it (Kafka's way for the leader to reassign).
    const again = coordinator.join(joinRequest(leader.memberId, [protocol('cooperative-sticky', 'owns 0')]));
    expect(coordinator.get('g')!.phase).toBe('PreparingRebalance');
    await coordinator.join(joinRequest(follower.memberId, [protocol('cooperative-sticky', 'owns 1')]));
    expect((await again).generationId).toBe(3);
  });
});
