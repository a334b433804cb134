import { KafkaErrorCode } from '@ledgerline/kafka-protocol';
import { joinError, newMemberId } from './group-members.js';
import type { ConsumerGroup, JoinRequest, JoinResult } from './group-state.js';

/**
 * Member ids given with MEMBER_ID_REQUIRED (JoinGroup v4+, KIP-394): a
 * dynamic member joining without an id is given one and must join again
 * with it before it is a member, so a client that retries a join it never
 * saw answered adds no member. Until then the id is pending: it expires
 * after the member's session timeout, as Kafka's coordinator lets it, and a
 * group holds at most `capacity` of them (the oldest is dropped for a new
 * one), so a client that never joins again leaves nothing behind.
 */
export class PendingMembers {
  constructor(private readonly capacity: number) {}

  /** Gives the joining member an id to join again with: the MEMBER_ID_REQUIRED answer. */
  require(group: ConsumerGroup, request: JoinRequest): JoinResult {
    if (group.pendingMembers.size >= this.capacity) {
      const [oldest] = group.pendingMembers.keys();
      if (oldest !== undefined) this.take(group, oldest);
    }
    const memberId = newMemberId(request);
    const timer = setTimeout(() => group.pendingMembers.delete(memberId), request.sessionTimeoutMs);
    group.pendingMembers.set(memberId, timer);
    return joinError(KafkaErrorCode.MEMBER_ID_REQUIRED, memberId);
  }

  /** Whether the id was pending; it is not any more. */
  take(group: ConsumerGroup, memberId: string): boolean {
    const timer = group.pendingMembers.get(memberId);
    if (timer === undefined) return false;
    clearTimeout(timer);
    group.pendingMembers.delete(memberId);
    return true;
  }

  /** The group goes (deleted, released to another coordinator, the gateway closing): its pending ids with it. */
  clear(group: ConsumerGroup): void {
    for (const timer of group.pendingMembers.values()) clearTimeout(timer);
    group.pendingMembers.clear();
  }
}
