import { KafkaErrorCode } from '@ledgerline/kafka-protocol';
import { currentGeneration, EMPTY, joinError, selectProtocol, updateMember } from './group-members.js';
import type { ConsumerGroup, GroupMember, JoinRequest, JoinResult, SyncResult } from './group-state.js';
import type { KafkaGatewaySettings } from './settings.js';

/** A member's SyncGroup answer once its group is Stable: its assignment, and the group's protocol. */
export function syncAnswer(group: ConsumerGroup, member: GroupMember): SyncResult {
  return {
    errorCode: KafkaErrorCode.NONE,
    assignment: member.assignment,
    protocolType: group.protocolType,
    protocolName: group.protocolName,
  };
}

/**
 * The classic protocol's rebalances and sessions, for the coordinator: a
 * rebalance completes once every known member has rejoined, or when the
 * longest rebalance timeout passes (members that did not rejoin are
 * removed); a member that sends nothing for its session timeout is removed.
 */
export class Rebalances {
  constructor(private readonly settings: Pick<KafkaGatewaySettings, 'groupInitialRebalanceDelayMs'>) {}

  /** The member waits for the group's next generation, which its join starts if none is under way. */
  awaitRebalance(group: ConsumerGroup, member: GroupMember, request: JoinRequest): Promise<JoinResult> {
    updateMember(member, request);
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

  /** Starts a rebalance (if none is under way): members learn it from heartbeats and rejoin. */
  prepareRebalance(group: ConsumerGroup): void {
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
    group.protocolName = selectProtocol(group);
    for (const member of group.members.values()) {
      const resolve = member.awaitingJoin;
      member.awaitingJoin = undefined;
      this.touch(group, member);
      resolve?.(currentGeneration(group, member, group.leaderId));
    }
  }

  completeSync(group: ConsumerGroup, assignments: { memberId: string; assignment: Buffer }[]): void {
    const byMember = new Map(assignments.map((entry) => [entry.memberId, entry.assignment]));
    group.phase = 'Stable';
    for (const member of group.members.values()) {
      member.assignment = byMember.get(member.memberId) ?? EMPTY;
      member.awaitingSync?.(syncAnswer(group, member));
      member.awaitingSync = undefined;
    }
  }

  /** Any request of a member keeps its session alive. */
  touch(group: ConsumerGroup, member: GroupMember): void {
    this.clearSession(member);
    member.sessionTimer = setTimeout(() => {
      member.sessionTimer = undefined;
      if (member.awaitingJoin === undefined && group.members.get(member.memberId) === member)
        this.removeMember(group, member);
    }, member.sessionTimeoutMs);
  }

  clearSession(member: GroupMember): void {
    if (member.sessionTimer !== undefined) clearTimeout(member.sessionTimer);
    member.sessionTimer = undefined;
  }

  /** Answers every waiting member with the error and stops the group's timers (the group goes). */
  endGroup(group: ConsumerGroup, errorCode: number): void {
    if (group.rebalanceTimer !== undefined) clearTimeout(group.rebalanceTimer);
    for (const member of group.members.values()) {
      this.clearSession(member);
      member.awaitingJoin?.(joinError(errorCode, member.memberId));
      member.awaitingSync?.({ errorCode, assignment: EMPTY });
    }
  }

  /** A member left or its session expired: the others rebalance without it. */
  removeMember(group: ConsumerGroup, member: GroupMember): void {
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

  /** The member is gone, and with it its instance's static mapping: a waiting join or sync is UNKNOWN_MEMBER_ID. */
  private dropMember(group: ConsumerGroup, member: GroupMember): void {
    this.clearSession(member);
    member.awaitingJoin?.(joinError(KafkaErrorCode.UNKNOWN_MEMBER_ID, member.memberId));
    member.awaitingSync?.({ errorCode: KafkaErrorCode.UNKNOWN_MEMBER_ID, assignment: EMPTY });
    group.members.delete(member.memberId);
    const instance = member.groupInstanceId;
    if (instance !== null && group.staticMembers.get(instance) === member.memberId)
      group.staticMembers.delete(instance);
  }
}
