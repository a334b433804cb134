import { KafkaErrorCode } from '@ledgerline/kafka-protocol';
import {
  currentGeneration,
  EMPTY,
  joinError,
  newMember,
  newMemberId,
  sameProtocols,
  selectProtocol,
  supportsProtocols,
  updateMember,
  validateMember,
} from './group-members.js';
import { PendingMembers } from './group-pending.js';
import { Rebalances, syncAnswer } from './group-rebalance.js';
import type {
  ConsumerGroup,
  GroupMember,
  JoinRequest,
  JoinResult,
  MemberIdentity,
  SyncProtocol,
  SyncResult,
} from './group-state.js';
import type { KafkaGatewaySettings } from './settings.js';

export type { JoinRequest } from './group-state.js';

type CoordinatorSettings = Pick<
  KafkaGatewaySettings,
  | 'groupMinSessionTimeoutMs'
  | 'groupMaxSessionTimeoutMs'
  | 'groupInitialRebalanceDelayMs'
  | 'maxGroups'
  | 'maxGroupMembers'
>;

/**
 * Kafka's classic group membership, in this gateway's memory: join, sync,
 * heartbeat and leave with session and rebalance timeouts (group-rebalance.ts),
 * static members (KIP-345) by their group.instance.id. The committed offsets
 * are not here: they are the groups' cursors.
 */
export class GroupCoordinator {
  private readonly groups = new Map<string, ConsumerGroup>();
  private readonly rebalances: Rebalances;
  private readonly pending: PendingMembers;
  private closed = false;

  constructor(private readonly settings: CoordinatorSettings) {
    this.rebalances = new Rebalances(settings);
    this.pending = new PendingMembers(settings.maxGroupMembers);
  }

  list(): ConsumerGroup[] {
    return [...this.groups.values()];
  }

  get(groupId: string): ConsumerGroup | undefined {
    return this.groups.get(groupId);
  }

  join(request: JoinRequest): Promise<JoinResult> {
    if (request.groupId === '') return Promise.resolve(joinError(KafkaErrorCode.INVALID_GROUP_ID));
    const { groupMinSessionTimeoutMs: min, groupMaxSessionTimeoutMs: max } = this.settings;
    if (request.sessionTimeoutMs < min || request.sessionTimeoutMs > max) {
      return Promise.resolve(joinError(KafkaErrorCode.INVALID_SESSION_TIMEOUT, request.memberId));
    }
    // Only a member without an id creates its group: a known member of a group not here is unknown.
    const group = request.memberId === '' ? this.groupFor(request.groupId) : this.groups.get(request.groupId);
    if (group === undefined) {
      const errorCode =
        request.memberId === '' ? KafkaErrorCode.COORDINATOR_NOT_AVAILABLE : KafkaErrorCode.UNKNOWN_MEMBER_ID;
      return Promise.resolve(joinError(errorCode, request.memberId));
    }
    if (!supportsProtocols(group, request.memberId, request.protocolType, request.protocols)) {
      return Promise.resolve(joinError(KafkaErrorCode.INCONSISTENT_GROUP_PROTOCOL, request.memberId));
    }
    if (request.memberId === '') return this.joinNew(group, request);
    if (request.groupInstanceId === null && this.pending.take(group, request.memberId)) {
      return this.joinWithGivenId(group, request);
    }
    return this.joinKnown(group, request);
  }

  /**
   * A member without an id: a static member whose group.instance.id the
   * group knows takes the place of that instance's member (a restart). A
   * dynamic member of JoinGroup v4+ is given an id to join again with
   * (MEMBER_ID_REQUIRED, as Kafka answers); anyone else is added and the
   * group rebalances.
   */
  private joinNew(group: ConsumerGroup, request: JoinRequest): Promise<JoinResult> {
    const instance = request.groupInstanceId;
    const known = instance === null ? undefined : group.staticMembers.get(instance);
    if (known !== undefined) return this.replaceStatic(group, known, request);
    if (group.members.size >= this.settings.maxGroupMembers) {
      return Promise.resolve(joinError(KafkaErrorCode.GROUP_MAX_SIZE_REACHED));
    }
    if (request.requireKnownMemberId && instance === null) return Promise.resolve(this.pending.require(group, request));
    return this.rebalances.awaitRebalance(group, this.addMember(group, request), request);
  }

  /** A dynamic member joining again with the id MEMBER_ID_REQUIRED gave it: it is added, and the group rebalances. */
  private joinWithGivenId(group: ConsumerGroup, request: JoinRequest): Promise<JoinResult> {
    if (group.members.size >= this.settings.maxGroupMembers) {
      return Promise.resolve(joinError(KafkaErrorCode.GROUP_MAX_SIZE_REACHED, request.memberId));
    }
    return this.rebalances.awaitRebalance(group, this.addMember(group, request, request.memberId), request);
  }

  /**
   * A member that names its id, as Kafka's coordinator answers it: a
   * follower rejoining a Stable (or CompletingRebalance) group with the
   * protocols it had gets the current generation again, without a
   * rebalance; the leader, or a member whose protocols changed (a
   * subscription, a cooperative member's owned partitions), rebalances it.
   */
  private joinKnown(group: ConsumerGroup, request: JoinRequest): Promise<JoinResult> {
    const errorCode = validateMember(group, request.memberId, request.groupInstanceId);
    if (errorCode !== KafkaErrorCode.NONE) return Promise.resolve(joinError(errorCode, request.memberId));
    const member = group.members.get(request.memberId)!;
    const unchanged = sameProtocols(member, request.protocols);
    if (
      (group.phase === 'CompletingRebalance' && unchanged) ||
      (group.phase === 'Stable' && unchanged && member.memberId !== group.leaderId)
    ) {
      this.rebalances.touch(group, member);
      return Promise.resolve(currentGeneration(group, member, group.leaderId));
    }
    return this.rebalances.awaitRebalance(group, member, request);
  }

  /**
   * KIP-345: a static member restarted (it joins without a member id, with
   * its group.instance.id) gets a new member id in place of its old one and
   * keeps its assignment. A Stable group whose protocol stays the same does
   * not rebalance: the member is answered at once with the current
   * generation and the leader as it was (so a restarted leader, told it is
   * not the leader, does not assign again, as Kafka answers JoinGroup before
   * v9) and gets its assignment from SyncGroup. The old member id is fenced:
   * its pending join or sync, and every later request, are
   * FENCED_INSTANCE_ID. In other phases the group rebalances as it would.
   */
  private replaceStatic(group: ConsumerGroup, oldMemberId: string, request: JoinRequest): Promise<JoinResult> {
    const old = group.members.get(oldMemberId)!;
    const leader = group.leaderId;
    this.rebalances.clearSession(old);
    old.awaitingJoin?.(joinError(KafkaErrorCode.FENCED_INSTANCE_ID, oldMemberId));
    old.awaitingSync?.({ errorCode: KafkaErrorCode.FENCED_INSTANCE_ID, assignment: EMPTY });
    const member: GroupMember = {
      ...old,
      memberId: newMemberId(request),
      clientId: request.clientId,
      clientHost: request.clientHost,
      awaitingJoin: undefined,
      awaitingSync: undefined,
      sessionTimer: undefined,
    };
    group.members.delete(oldMemberId);
    group.members.set(member.memberId, member);
    group.staticMembers.set(request.groupInstanceId!, member.memberId);
    if (leader === oldMemberId) group.leaderId = member.memberId;
    if (group.phase === 'Stable') {
      updateMember(member, request);
      if (selectProtocol(group) === group.protocolName) {
        this.rebalances.touch(group, member);
        return Promise.resolve(currentGeneration(group, member, leader));
      }
    }
    return this.rebalances.awaitRebalance(group, member, request);
  }

  /**
   * SyncGroup: the leader's assignments, handed to every member once the
   * leader sent them. A v5 request naming a protocol type or name other than
   * the group's is INCONSISTENT_GROUP_PROTOCOL (KIP-559), checked after the
   * member and generation, as Kafka checks it.
   */
  sync(
    groupId: string,
    generationId: number,
    { memberId, groupInstanceId }: MemberIdentity,
    assignments: { memberId: string; assignment: Buffer }[],
    protocol: SyncProtocol = { type: null, name: null },
  ): Promise<SyncResult> {
    const group = this.groups.get(groupId);
    const errorCode =
      group === undefined ? KafkaErrorCode.UNKNOWN_MEMBER_ID : validateMember(group, memberId, groupInstanceId);
    if (group === undefined || errorCode !== KafkaErrorCode.NONE) {
      return Promise.resolve({ errorCode, assignment: EMPTY });
    }
    const member = group.members.get(memberId)!;
    if (generationId !== group.generationId) {
      return Promise.resolve({ errorCode: KafkaErrorCode.ILLEGAL_GENERATION, assignment: EMPTY });
    }
    if (
      (protocol.type !== null && protocol.type !== group.protocolType) ||
      (protocol.name !== null && protocol.name !== group.protocolName)
    ) {
      return Promise.resolve({ errorCode: KafkaErrorCode.INCONSISTENT_GROUP_PROTOCOL, assignment: EMPTY });
    }
    this.rebalances.touch(group, member);
    if (group.phase === 'PreparingRebalance') {
      return Promise.resolve({ errorCode: KafkaErrorCode.REBALANCE_IN_PROGRESS, assignment: EMPTY });
    }
    if (group.phase === 'Stable') return Promise.resolve(syncAnswer(group, member));
    const synced = new Promise<SyncResult>((resolve) => {
      member.awaitingSync = resolve;
    });
    if (memberId === group.leaderId) this.rebalances.completeSync(group, assignments);
    return synced;
  }

  heartbeat(groupId: string, generationId: number, { memberId, groupInstanceId }: MemberIdentity): number {
    const group = this.groups.get(groupId);
    if (group === undefined) return KafkaErrorCode.UNKNOWN_MEMBER_ID;
    const errorCode = validateMember(group, memberId, groupInstanceId);
    if (errorCode !== KafkaErrorCode.NONE) return errorCode;
    if (generationId !== group.generationId) return KafkaErrorCode.ILLEGAL_GENERATION;
    this.rebalances.touch(group, group.members.get(memberId)!);
    return group.phase === 'PreparingRebalance' ? KafkaErrorCode.REBALANCE_IN_PROGRESS : KafkaErrorCode.NONE;
  }

  /**
   * LeaveGroup: each member leaves (and the group rebalances without it) or
   * gets its error. A member named by its group.instance.id alone (an empty
   * member id, LeaveGroup v3+: an operator removing a static member) is that
   * instance's current member; one named by both must match them.
   */
  leave(groupId: string, members: readonly MemberIdentity[]): number[] {
    return members.map(({ memberId, groupInstanceId }) => {
      const group = this.groups.get(groupId);
      if (group === undefined) return KafkaErrorCode.UNKNOWN_MEMBER_ID;
      let leaving = memberId;
      if (memberId === '') {
        const current = groupInstanceId === null ? undefined : group.staticMembers.get(groupInstanceId);
        if (current === undefined) return KafkaErrorCode.UNKNOWN_MEMBER_ID;
        leaving = current;
      } else {
        const errorCode = validateMember(group, memberId, groupInstanceId);
        if (errorCode !== KafkaErrorCode.NONE) return errorCode;
      }
      this.rebalances.removeMember(group, group.members.get(leaving)!);
      return KafkaErrorCode.NONE;
    });
  }

  /**
   * Whether a commit of this generation and member may be applied: any
   * commit while the group has no members (tools setting offsets), else only
   * a current member's of the current generation (a static member's
   * group.instance.id, OffsetCommit v7+, checked as JoinGroup checks it).
   */
  canCommit(groupId: string, generationId: number, { memberId, groupInstanceId }: MemberIdentity): number {
    const group = this.groups.get(groupId);
    if (group === undefined || group.members.size === 0) {
      return generationId < 0 || group === undefined ? KafkaErrorCode.NONE : KafkaErrorCode.ILLEGAL_GENERATION;
    }
    if (generationId < 0 && memberId === '' && groupInstanceId === null) return KafkaErrorCode.NONE;
    const errorCode = validateMember(group, memberId, groupInstanceId);
    if (errorCode !== KafkaErrorCode.NONE) return errorCode;
    if (generationId !== group.generationId) return KafkaErrorCode.ILLEGAL_GENERATION;
    if (group.phase === 'CompletingRebalance') return KafkaErrorCode.REBALANCE_IN_PROGRESS;
    return KafkaErrorCode.NONE;
  }

  /**
   * Forgets a group that has no members (DeleteGroups: Kafka's group goes
   * Dead); a group with members is kept. True when it was forgotten.
   */
  forget(groupId: string): boolean {
    const group = this.groups.get(groupId);
    if (group === undefined || group.members.size > 0) return false;
    if (group.rebalanceTimer !== undefined) clearTimeout(group.rebalanceTimer);
    this.pending.clear(group);
    this.groups.delete(groupId);
    return true;
  }

  close(): void {
    this.closed = true;
    for (const group of this.groups.values()) {
      this.rebalances.endGroup(group, KafkaErrorCode.COORDINATOR_NOT_AVAILABLE);
      this.pending.clear(group);
    }
    this.groups.clear();
  }

  /**
   * Forgets every group `keep` does not keep (another gateway coordinates it
   * now): members waiting on a join or a sync are answered NOT_COORDINATOR,
   * so they find the new coordinator at once. Returns how many went.
   */
  release(keep: (groupId: string) => boolean): number {
    let released = 0;
    for (const [groupId, group] of this.groups) {
      if (keep(groupId)) continue;
      this.rebalances.endGroup(group, KafkaErrorCode.NOT_COORDINATOR);
      this.pending.clear(group);
      this.groups.delete(groupId);
      released++;
    }
    return released;
  }

  private groupFor(groupId: string): ConsumerGroup | undefined {
    const known = this.groups.get(groupId);
    if (known !== undefined) return known;
    if (this.closed || this.groups.size >= this.settings.maxGroups) return undefined;
    const group: ConsumerGroup = {
      groupId,
      phase: 'Empty',
      generationId: 0,
      protocolType: '',
      protocolName: '',
      leaderId: '',
      members: new Map(),
      staticMembers: new Map(),
      pendingMembers: new Map(),
      rebalanceTimer: undefined,
      joinNotBeforeMs: 0,
    };
    this.groups.set(groupId, group);
    return group;
  }

  private addMember(group: ConsumerGroup, request: JoinRequest, memberId?: string): GroupMember {
    const member = newMember(request, memberId);
    group.members.set(member.memberId, member);
    if (request.groupInstanceId !== null) group.staticMembers.set(request.groupInstanceId, member.memberId);
    return member;
  }
}
