import { randomUUID } from 'node:crypto';
import { KafkaErrorCode } from '@ledgerline/kafka-protocol';
import type { ConsumerGroup, GroupMember, JoinRequest, JoinResult } from './group-state.js';

export const EMPTY = Buffer.alloc(0);

export function joinError(errorCode: number, memberId = ''): JoinResult {
  return { errorCode, generationId: -1, protocolName: '', leader: '', memberId, members: [] };
}

/**
 * Kafka's check of a member's request: a group.instance.id the group does
 * not know is UNKNOWN_MEMBER_ID, one whose current member id is another is
 * FENCED_INSTANCE_ID (a stale instance, replaced by its restart), and a
 * member id the group does not have is UNKNOWN_MEMBER_ID.
 */
export function validateMember(group: ConsumerGroup, memberId: string, groupInstanceId: string | null): number {
  if (groupInstanceId !== null) {
    const current = group.staticMembers.get(groupInstanceId);
    if (current === undefined) return KafkaErrorCode.UNKNOWN_MEMBER_ID;
    if (current !== memberId) return KafkaErrorCode.FENCED_INSTANCE_ID;
  }
  return group.members.has(memberId) ? KafkaErrorCode.NONE : KafkaErrorCode.UNKNOWN_MEMBER_ID;
}

/** Kafka's member ids: the group.instance.id of a static member, else the client id, and a UUID. */
export function newMemberId(request: JoinRequest): string {
  return `${request.groupInstanceId ?? (request.clientId || 'member')}-${randomUUID()}`;
}

export function newMember(request: JoinRequest, memberId = newMemberId(request)): GroupMember {
  return {
    memberId,
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
}

/** A member's timeouts and protocols, from its latest JoinGroup. */
export function updateMember(member: GroupMember, request: JoinRequest): void {
  member.sessionTimeoutMs = request.sessionTimeoutMs;
  member.rebalanceTimeoutMs = request.rebalanceTimeoutMs > 0 ? request.rebalanceTimeoutMs : request.sessionTimeoutMs;
  member.protocols = request.protocols;
  member.protocolType = request.protocolType;
}

/** The members as the leader's JoinGroup answer lists them, each with its metadata of the group's protocol. */
export function memberList(group: ConsumerGroup): JoinResult['members'] {
  return [...group.members.values()].map((member) => ({
    memberId: member.memberId,
    groupInstanceId: member.groupInstanceId,
    metadata: member.protocols.find((protocol) => protocol.name === group.protocolName)?.metadata ?? EMPTY,
  }));
}

/** A member's JoinGroup answer for the group's generation as it is, naming `leader` its leader. */
export function currentGeneration(group: ConsumerGroup, member: GroupMember, leader: string): JoinResult {
  return {
    errorCode: KafkaErrorCode.NONE,
    generationId: group.generationId,
    protocolType: group.protocolType,
    protocolName: group.protocolName,
    leader,
    memberId: member.memberId,
    members: member.memberId === leader ? memberList(group) : [],
  };
}

export interface GroupProtocol {
  name: string;
  metadata: Buffer;
}

/**
 * Whether a member joining with these protocols can be in the group, as
 * Kafka's coordinator decides it (ClassicGroup.supportsProtocols): into a
 * group without other members, any protocol type and at least one protocol;
 * otherwise the group's protocol type and at least one protocol every other
 * member supports. `memberId` (the joining member's, or '') is not counted
 * among the others: its own earlier protocols do not vote for its new ones.
 */
export function supportsProtocols(
  group: ConsumerGroup,
  memberId: string,
  protocolType: string,
  protocols: readonly GroupProtocol[],
): boolean {
  const others = [...group.members.values()].filter((member) => member.memberId !== memberId);
  if (others.length === 0) return protocolType !== '' && protocols.length > 0;
  return (
    protocolType === group.protocolType &&
    protocols.some((protocol) => others.every((member) => supports(member, protocol.name)))
  );
}

/**
 * The group's protocol for its next generation (Kafka's vote): among the
 * protocols every member supports, each member votes for the first in its
 * own order of preference, and the one with the most votes wins; a tie goes
 * to the one the leader (else the first member) prefers.
 */
export function selectProtocol(group: ConsumerGroup): string {
  const members = [...group.members.values()];
  const first = group.members.get(group.leaderId) ?? members[0];
  if (first === undefined) return '';
  const candidates = first.protocols
    .map((protocol) => protocol.name)
    .filter((name) => members.every((member) => supports(member, name)));
  const votes = new Map<string, number>(candidates.map((name) => [name, 0]));
  for (const member of members) {
    const vote = member.protocols.find((protocol) => votes.has(protocol.name));
    if (vote !== undefined) votes.set(vote.name, (votes.get(vote.name) ?? 0) + 1);
  }
  let chosen = candidates[0] ?? '';
  for (const name of candidates) if ((votes.get(name) ?? 0) > (votes.get(chosen) ?? 0)) chosen = name;
  return chosen;
}

/** Whether a member rejoins with the protocols, names and metadata, it had (Kafka's MemberMetadata.matches). */
export function sameProtocols(member: GroupMember, protocols: readonly GroupProtocol[]): boolean {
  return (
    member.protocols.length === protocols.length &&
    member.protocols.every(
      (protocol, index) =>
        protocol.name === protocols[index]!.name && protocol.metadata.equals(protocols[index]!.metadata),
    )
  );
}

function supports(member: GroupMember, name: string): boolean {
  return member.protocols.some((protocol) => protocol.name === name);
}
