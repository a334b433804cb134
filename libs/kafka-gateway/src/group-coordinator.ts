import { randomUUID } from 'node:crypto';
import { KafkaErrorCode } from '@ledgerline/kafka-protocol';
import type { ConsumerGroup, GroupMember, JoinResult, SyncResult } from './group-state.js';
import type { KafkaGatewaySettings } from './settings.js';

export interface JoinRequest {
  groupId: string;
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  protocolType: string;
  protocols: { name: string; metadata: Buffer }[];
}

type CoordinatorSettings = Pick<
  KafkaGatewaySettings,
  | 'groupMinSessionTimeoutMs'
  | 'groupMaxSessionTimeoutMs'
  | 'groupInitialRebalanceDelayMs'
  | 'maxGroups'
  | 'maxGroupMembers'
>;

const EMPTY = Buffer.alloc(0);

function joinError(errorCode: number, memberId = ''): JoinResult {
  return { errorCode, generationId: -1, protocolName: '', leader: '', memberId, members: [] };
}

/**
 * Kafka's classic group membership, in this gateway's memory: join, sync,
 * heartbeat and leave with session and rebalance timeouts. A rebalance
 * completes once every known member has rejoined, or when the longest
 * rebalance timeout passes (members that did not rejoin are removed). The
 * committed offsets are not here: they are the groups' cursors.
 */
export class GroupCoordinator {
  private readonly groups = new Map<string, ConsumerGroup>();
  private closed = false;

  constructor(private readonly settings: CoordinatorSettings) {}

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
    const group = this.groupFor(request.groupId);
    if (group === undefined) return Promise.resolve(joinError(KafkaErrorCode.COORDINATOR_NOT_AVAILABLE));
    if (group.members.size > 0 && group.protocolType !== request.protocolType) {
      return Promise.resolve(joinError(KafkaErrorCode.INCONSISTENT_GROUP_PROTOCOL, request.memberId));
    }
    let member = request.memberId === '' ? undefined : group.members.get(request.memberId);
    if (request.memberId !== '' && member === undefined) {
      return Promise.resolve(joinError(KafkaErrorCode.UNKNOWN_MEMBER_ID, request.memberId));
    }
    if (member === undefined) {
      if (group.members.size >= this.settings.maxGroupMembers) {
        return Promise.resolve(joinError(KafkaErrorCode.GROUP_MAX_SIZE_REACHED));
      }
      member = this.addMember(group, request);
    }
    member.sessionTimeoutMs = request.sessionTimeoutMs;
    member.rebalanceTimeoutMs = request.rebalanceTimeoutMs > 0 ? request.rebalanceTimeoutMs : request.sessionTimeoutMs;
    member.protocols = request.protocols;
    member.protocolType = request.protocolType;
    group.protocolType = request.protocolType;
    const joined = new Promise<JoinResult>((resolve) => {
      member.awaitingJoin?.(joinError(KafkaErrorCode.UNKNOWN_MEMBER_ID, member.memberId));
      member.awaitingJoin = resolve;
    });
    this.clearSession(member);
    this.prepareRebalance(group);
    this.maybeCompleteJoin(group);
    return joined;
  }

  sync(
    groupId: string,
    generationId: number,
    memberId: string,
    assignments: { memberId: string; assignment: Buffer }[],
  ): Promise<SyncResult> {
    const group = this.groups.get(groupId);
    const member = group?.members.get(memberId);
    if (group === undefined || member === undefined) {
      return Promise.resolve({ errorCode: KafkaErrorCode.UNKNOWN_MEMBER_ID, assignment: EMPTY });
    }
    if (generationId !== group.generationId) {
      return Promise.resolve({ errorCode: KafkaErrorCode.ILLEGAL_GENERATION, assignment: EMPTY });
    }
    this.touch(group, member);
    if (group.phase === 'PreparingRebalance') {
      return Promise.resolve({ errorCode: KafkaErrorCode.REBALANCE_IN_PROGRESS, assignment: EMPTY });
    }
    if (group.phase === 'Stable')
      return Promise.resolve({ errorCode: KafkaErrorCode.NONE, assignment: member.assignment });
    const synced = new Promise<SyncResult>((resolve) => {
      member.awaitingSync = resolve;
    });
    if (memberId === group.leaderId) this.completeSync(group, assignments);
    return synced;
  }

  heartbeat(groupId: string, generationId: number, memberId: string): number {
    const group = this.groups.get(groupId);
    const member = group?.members.get(memberId);
    if (group === undefined || member === undefined) return KafkaErrorCode.UNKNOWN_MEMBER_ID;
    if (generationId !== group.generationId) return KafkaErrorCode.ILLEGAL_GENERATION;
    this.touch(group, member);
    return group.phase === 'PreparingRebalance' ? KafkaErrorCode.REBALANCE_IN_PROGRESS : KafkaErrorCode.NONE;
  }

  leave(groupId: string, memberId: string): number {
    const group = this.groups.get(groupId);
    const member = group?.members.get(memberId);
    if (group === undefined || member === undefined) return KafkaErrorCode.UNKNOWN_MEMBER_ID;
    this.removeMember(group, member);
    return KafkaErrorCode.NONE;
  }

  /**
   * Whether a commit of this generation and member may be applied: any
   * commit while the group has no members (tools setting offsets), else only
   * a current member's of the current generation.
   */
  canCommit(groupId: string, generationId: number, memberId: string): number {
    const group = this.groups.get(groupId);
    if (group === undefined || group.members.size === 0) {
      return generationId < 0 || group === undefined ? KafkaErrorCode.NONE : KafkaErrorCode.ILLEGAL_GENERATION;
    }
    if (generationId < 0 && memberId === '') return KafkaErrorCode.NONE;
    if (!group.members.has(memberId)) return KafkaErrorCode.UNKNOWN_MEMBER_ID;
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
    this.groups.delete(groupId);
    return true;
  }

  close(): void {
    this.closed = true;
    for (const group of this.groups.values()) this.endGroup(group, KafkaErrorCode.COORDINATOR_NOT_AVAILABLE);
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
      this.endGroup(group, KafkaErrorCode.NOT_COORDINATOR);
      this.groups.delete(groupId);
      released++;
    }
    return released;
  }

  private endGroup(group: ConsumerGroup, errorCode: number): void {
    if (group.rebalanceTimer !== undefined) clearTimeout(group.rebalanceTimer);
    for (const member of group.members.values()) {
      this.clearSession(member);
      member.awaitingJoin?.(joinError(errorCode, member.memberId));
      member.awaitingSync?.({ errorCode, assignment: EMPTY });
    }
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
      rebalanceTimer: undefined,
      joinNotBeforeMs: 0,
    };
    this.groups.set(groupId, group);
    return group;
  }

  private addMember(group: ConsumerGroup, request: JoinRequest): GroupMember {
    const member: GroupMember = {
      memberId: `${request.clientId || 'member'}-${randomUUID()}`,
      groupInstanceId: request.groupInstanceId,
      clientId: request.clientId,
      clientHost: request.clientHost,
      sessionTimeoutMs: request.sessionTimeoutMs,
      rebalanceTimeoutMs: request.rebalanceTimeoutMs,
      protocolType: request.protocolType,
      protocols: request.protocols,
      assignment: EMPTY,
      awaitingJoin: undefined,
      awaitingSync: undefined,
      sessionTimer: undefined,
    };
    group.members.set(member.memberId, member);
    return member;
  }

  /** Starts a rebalance (if none is under way): members learn it from heartbeats and rejoin. */
  private prepareRebalance(group: ConsumerGroup): void {
    if (group.phase === 'PreparingRebalance') return;
    const wasEmpty = group.phase === 'Empty';
    group.phase = 'PreparingRebalance';
    // Pending syncs of the old generation end: their members must rejoin.
    for (const member of group.members.values()) {
      member.awaitingSync?.({ errorCode: KafkaErrorCode.REBALANCE_IN_PROGRESS, assignment: EMPTY });
      member.awaitingSync = undefined;
    }
    const timeoutMs = Math.max(...[...group.members.values()].map((member) => member.rebalanceTimeoutMs), 0);
    const delayMs = wasEmpty ? this.settings.groupInitialRebalanceDelayMs : timeoutMs;
    group.rebalanceTimer = setTimeout(() => this.completeJoin(group, true), delayMs);
    // An empty group's first rebalance waits for more members before it may complete.
    group.joinNotBeforeMs = wasEmpty ? Date.now() + delayMs : 0;
  }

  private maybeCompleteJoin(group: ConsumerGroup): void {
    if (Date.now() < group.joinNotBeforeMs) return;
    if ([...group.members.values()].every((member) => member.awaitingJoin !== undefined))
      this.completeJoin(group, false);
  }

  private completeJoin(group: ConsumerGroup, timedOut: boolean): void {
    if (group.phase !== 'PreparingRebalance') return;
    if (group.rebalanceTimer !== undefined) clearTimeout(group.rebalanceTimer);
    group.rebalanceTimer = undefined;
    group.joinNotBeforeMs = 0;
    if (timedOut) {
      for (const member of [...group.members.values()]) {
        if (member.awaitingJoin === undefined) this.dropMember(group, member);
      }
    }
    if (group.members.size === 0) {
      group.phase = 'Empty';
      group.generationId++;
      return;
    }
    group.generationId++;
    group.phase = 'CompletingRebalance';
    if (!group.members.has(group.leaderId)) group.leaderId = group.members.keys().next().value as string;
    group.protocolName = this.chooseProtocol(group);
    const members = [...group.members.values()].map((member) => ({
      memberId: member.memberId,
      groupInstanceId: member.groupInstanceId,
      metadata: member.protocols.find((protocol) => protocol.name === group.protocolName)?.metadata ?? EMPTY,
    }));
    for (const member of group.members.values()) {
      const resolve = member.awaitingJoin;
      member.awaitingJoin = undefined;
      this.touch(group, member);
      resolve?.({
        errorCode: KafkaErrorCode.NONE,
        generationId: group.generationId,
        protocolName: group.protocolName,
        leader: group.leaderId,
        memberId: member.memberId,
        members: member.memberId === group.leaderId ? members : [],
      });
    }
  }

  /** The leader's most preferred protocol that every member supports (Kafka's vote, simplified to the leader's order). */
  private chooseProtocol(group: ConsumerGroup): string {
    const leader = group.members.get(group.leaderId);
    const candidates = leader?.protocols.map((protocol) => protocol.name) ?? [];
    const all = [...group.members.values()];
    return (
      candidates.find((name) => all.every((member) => member.protocols.some((p) => p.name === name))) ??
      candidates[0] ??
      ''
    );
  }

  private completeSync(group: ConsumerGroup, assignments: { memberId: string; assignment: Buffer }[]): void {
    const byMember = new Map(assignments.map((entry) => [entry.memberId, entry.assignment]));
    group.phase = 'Stable';
    for (const member of group.members.values()) {
      member.assignment = byMember.get(member.memberId) ?? EMPTY;
      member.awaitingSync?.({ errorCode: KafkaErrorCode.NONE, assignment: member.assignment });
      member.awaitingSync = undefined;
    }
  }

  /** Any request of a member keeps its session alive. */
  private touch(group: ConsumerGroup, member: GroupMember): void {
    this.clearSession(member);
    member.sessionTimer = setTimeout(() => {
      member.sessionTimer = undefined;
      if (member.awaitingJoin === undefined && group.members.get(member.memberId) === member)
        this.removeMember(group, member);
    }, member.sessionTimeoutMs);
  }

  private clearSession(member: GroupMember): void {
    if (member.sessionTimer !== undefined) clearTimeout(member.sessionTimer);
    member.sessionTimer = undefined;
  }

  private dropMember(group: ConsumerGroup, member: GroupMember): void {
    this.clearSession(member);
    member.awaitingJoin?.(joinError(KafkaErrorCode.UNKNOWN_MEMBER_ID, member.memberId));
    member.awaitingSync?.({ errorCode: KafkaErrorCode.UNKNOWN_MEMBER_ID, assignment: EMPTY });
    group.members.delete(member.memberId);
  }

  /** A member left or its session expired: the others rebalance without it. */
  private removeMember(group: ConsumerGroup, member: GroupMember): void {
    this.dropMember(group, member);
    if (group.members.size === 0) {
      if (group.rebalanceTimer !== undefined) clearTimeout(group.rebalanceTimer);
      group.rebalanceTimer = undefined;
      group.phase = 'Empty';
      group.generationId++;
      return;
    }
    if (group.phase === 'PreparingRebalance') this.maybeCompleteJoin(group);
    else this.prepareRebalance(group);
  }
}
