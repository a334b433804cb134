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
  rebalanceTimer: NodeJS.Timeout | undefined;
  /** Until then a rebalance of a group that was empty waits for more members (group.initial.rebalance.delay.ms). */
  joinNotBeforeMs: number;
}

export interface JoinResult {
  errorCode: number;
  generationId: number;
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
}
