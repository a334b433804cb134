/** A JoinGroup, as the coordinator reads it. */
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
  /**
   * JoinGroup v4+: a dynamic member joining without an id is answered
   * MEMBER_ID_REQUIRED with one, and joins again with it (group-pending.ts).
   */
  requireKnownMemberId: boolean;
}

/** One member of a consumer group, as the classic group protocol knows it. */
export interface GroupMember {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  protocolType: string;
  protocols: { name: string; metadata: Buffer }[];
  assignment: Buffer;
  /** Resolves the member's pending JoinGroup once the rebalance completes. */
  awaitingJoin: ((result: JoinResult) => void) | undefined;
  /** Resolves the member's pending SyncGroup once the leader has sent the assignments. */
  awaitingSync: ((result: SyncResult) => void) | undefined;
  sessionTimer: NodeJS.Timeout | undefined;
}

/** Kafka's group states (GroupState in the classic coordinator). */
export type GroupPhase = 'Empty' | 'PreparingRebalance' | 'CompletingRebalance' | 'Stable' | 'Dead';

export interface ConsumerGroup {
  readonly groupId: string;
  phase: GroupPhase;
  generationId: number;
  protocolType: string;
  protocolName: string;
  leaderId: string;
  readonly members: Map<string, GroupMember>;
  /** Static members (KIP-345): each group.instance.id's current member id. */
  readonly staticMembers: Map<string, string>;
  /** Member ids given with MEMBER_ID_REQUIRED, not joined with yet, each with its expiry (group-pending.ts). */
  readonly pendingMembers: Map<string, NodeJS.Timeout>;
  rebalanceTimer: NodeJS.Timeout | undefined;
  /** Until then a rebalance of a group that was empty waits for more members (group.initial.rebalance.delay.ms). */
  joinNotBeforeMs: number;
}

export interface JoinResult {
  errorCode: number;
  generationId: number;
  /** The group's protocol type, answered from JoinGroup v7 (KIP-559); absent in an error. */
  protocolType?: string;
  protocolName: string;
  leader: string;
  memberId: string;
  members: { memberId: string; groupInstanceId: string | null; metadata: Buffer }[];
}

/** A member as requests name it: by member id, and by group.instance.id when static (else null). */
export interface MemberIdentity {
  memberId: string;
  groupInstanceId: string | null;
}

export interface SyncResult {
  errorCode: number;
  assignment: Buffer;
  /** The group's protocol type and name, answered from SyncGroup v5 (KIP-559); absent in an error. */
  protocolType?: string;
  protocolName?: string;
}

/** The protocol type and name a SyncGroup v5 names (null: not named, as before v5). */
export interface SyncProtocol {
  type: string | null;
  name: string | null;
}
