import { KafkaErrorCode, type DecodedRequest, type Message } from '@ledgerline/kafka-protocol';
import type { GatewayContext } from '../gateway-context.js';
import { joinError } from '../group-members.js';
import type { JoinResult, MemberIdentity } from '../group-state.js';
import type { Session } from '../session.js';

/** Kafka's key type of a consumer group in FindCoordinator v1+ (1 is a transactional id). */
const GROUP_KEY = 0;
/** What a transactional producer is told, so its user knows the refusal is the gateway's and not an ACL's. */
export const TRANSACTIONS_REFUSED =
  'transactions are not served by the Ledgerline Kafka gateway yet: produce without transactional.id (idempotence works)';

/**
 * FindCoordinator v0-2: the live gateway rendezvous hashing picks for the
 * group (gateway-peers.ts). A transactional id is refused with
 * TRANSACTIONAL_ID_AUTHORIZATION_FAILED, which Kafka's clients take as final:
 * COORDINATOR_NOT_AVAILABLE, Kafka's answer while its coordinator loads, made
 * librdkafka's init_transactions retry until its timeout.
 */
export async function handleFindCoordinator(context: GatewayContext, request: DecodedRequest): Promise<Message> {
  if (request.header.apiVersion >= 1 && request.body['keyType'] !== GROUP_KEY) {
    return {
      throttleTimeMs: 0,
      errorCode: KafkaErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
      errorMessage: TRANSACTIONS_REFUSED,
      nodeId: -1,
      host: '',
      port: -1,
    };
  }
  const broker = context.peers.coordinatorOf(request.body['key'] as string);
  return {
    throttleTimeMs: 0,
    errorCode: KafkaErrorCode.NONE,
    errorMessage: null,
    nodeId: broker.nodeId,
    host: broker.host,
    port: broker.port,
  };
}

/**
 * The JoinGroup answer in the request's version: from v7 the group's
 * protocol type, and, in an error, a null protocol type and name, as Kafka
 * answers (before v7 the name is empty there).
 */
function joinAnswer(version: number, result: JoinResult): Message {
  const failed = result.errorCode !== KafkaErrorCode.NONE;
  return {
    throttleTimeMs: 0,
    ...result,
    protocolType: failed ? null : (result.protocolType ?? null),
    protocolName: failed && version >= 7 ? null : result.protocolName,
  };
}

/**
 * JoinGroup v0-8: answers once the group's rebalance completes, or at once
 * for a member the group takes back without one (a restarted static member,
 * v5's group_instance_id; a follower rejoining unchanged). From v4 a dynamic
 * member joining without an id is answered MEMBER_ID_REQUIRED with one, and
 * joins with it.
 */
export async function handleJoinGroup(
  context: GatewayContext,
  request: DecodedRequest,
  session: Session,
): Promise<Message> {
  const body = request.body;
  const version = request.header.apiVersion;
  if (!context.coordinates(body['groupId'] as string)) {
    return joinAnswer(version, joinError(KafkaErrorCode.NOT_COORDINATOR, body['memberId'] as string));
  }
  const result = await context.groups.join({
    groupId: body['groupId'] as string,
    memberId: body['memberId'] as string,
    groupInstanceId: body['groupInstanceId'] as string | null,
    clientId: request.header.clientId ?? '',
    clientHost: session.clientHost,
    sessionTimeoutMs: body['sessionTimeoutMs'] as number,
    rebalanceTimeoutMs: body['rebalanceTimeoutMs'] as number,
    protocolType: body['protocolType'] as string,
    protocols: body['protocols'] as { name: string; metadata: Buffer }[],
    requireKnownMemberId: version >= 4,
  });
  return joinAnswer(version, result);
}

/**
 * SyncGroup v0-5: the leader's assignments, handed to each member (v3 names a
 * static member's instance too); v5 names the group's protocol type and name,
 * checked against the group's and answered with the assignment.
 */
export async function handleSyncGroup(context: GatewayContext, request: DecodedRequest): Promise<Message> {
  const body = request.body;
  if (!context.coordinates(body['groupId'] as string)) {
    return {
      throttleTimeMs: 0,
      errorCode: KafkaErrorCode.NOT_COORDINATOR,
      protocolType: null,
      protocolName: null,
      assignment: Buffer.alloc(0),
    };
  }
  const result = await context.groups.sync(
    body['groupId'] as string,
    body['generationId'] as number,
    memberOf(body),
    body['assignments'] as { memberId: string; assignment: Buffer }[],
    { type: body['protocolType'] as string | null, name: body['protocolName'] as string | null },
  );
  return {
    throttleTimeMs: 0,
    errorCode: result.errorCode,
    protocolType: result.protocolType ?? null,
    protocolName: result.protocolName ?? null,
    assignment: result.assignment,
  };
}

/** Heartbeat v0-4 (v3 names a static member's instance: a stale one is FENCED_INSTANCE_ID). */
export async function handleHeartbeat(context: GatewayContext, request: DecodedRequest): Promise<Message> {
  const body = request.body;
  if (!context.coordinates(body['groupId'] as string))
    return { throttleTimeMs: 0, errorCode: KafkaErrorCode.NOT_COORDINATOR };
  const errorCode = context.groups.heartbeat(body['groupId'] as string, body['generationId'] as number, memberOf(body));
  return { throttleTimeMs: 0, errorCode };
}

/**
 * LeaveGroup v0-5: v3 leaves several members at once, each by member id, or
 * by group.instance.id alone (an empty member id) for a static member; each
 * member gets its own error, the request NONE. v5's reasons are not kept.
 */
export async function handleLeaveGroup(context: GatewayContext, request: DecodedRequest): Promise<Message> {
  const groupId = request.body['groupId'] as string;
  if (!context.coordinates(groupId))
    return { throttleTimeMs: 0, errorCode: KafkaErrorCode.NOT_COORDINATOR, members: [] };
  if (request.header.apiVersion < 3) {
    const [errorCode] = context.groups.leave(groupId, [
      { memberId: request.body['memberId'] as string, groupInstanceId: null },
    ]);
    return { throttleTimeMs: 0, errorCode, members: [] };
  }
  const leaving = (request.body['members'] as Message[]).map(memberOf);
  const errorCodes = context.groups.leave(groupId, leaving);
  const members = leaving.map((member, index) => ({
    memberId: member.memberId,
    groupInstanceId: member.groupInstanceId,
    errorCode: errorCodes[index],
  }));
  return { throttleTimeMs: 0, errorCode: KafkaErrorCode.NONE, members };
}

/** The member a group request names: its id, and its group.instance.id where the version carries one (else null). */
export function memberOf(body: Message): MemberIdentity {
  return { memberId: body['memberId'] as string, groupInstanceId: (body['groupInstanceId'] as string | null) ?? null };
}

export async function handleListGroups(context: GatewayContext): Promise<Message> {
  return {
    throttleTimeMs: 0,
    errorCode: KafkaErrorCode.NONE,
    groups: context.groups.list().map((group) => ({ groupId: group.groupId, protocolType: group.protocolType })),
  };
}

/** DescribeGroups v0-4: a group this gateway does not know is reported Dead, as Kafka does. */
export async function handleDescribeGroups(context: GatewayContext, request: DecodedRequest): Promise<Message> {
  const groups = (request.body['groups'] as string[]).map((groupId) => {
    if (!context.coordinates(groupId)) {
      const notHere = { groupState: '', protocolType: '', protocolData: '', members: [] };
      return { errorCode: KafkaErrorCode.NOT_COORDINATOR, groupId, ...notHere };
    }
    const group = context.groups.get(groupId);
    if (group === undefined) {
      return {
        errorCode: KafkaErrorCode.NONE,
        groupId,
        groupState: 'Dead',
        protocolType: '',
        protocolData: '',
        members: [],
      };
    }
    return {
      errorCode: KafkaErrorCode.NONE,
      groupId,
      groupState: group.phase,
      protocolType: group.protocolType,
      protocolData: group.protocolName,
      members: [...group.members.values()].map((member) => ({
        memberId: member.memberId,
        groupInstanceId: member.groupInstanceId,
        clientId: member.clientId,
        clientHost: member.clientHost,
        memberMetadata:
          member.protocols.find((protocol) => protocol.name === group.protocolName)?.metadata ?? Buffer.alloc(0),
        memberAssignment: member.assignment,
      })),
    };
  });
  return { throttleTimeMs: 0, groups };
}
