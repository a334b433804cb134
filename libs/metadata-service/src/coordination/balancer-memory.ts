import type { OwnerRecord } from '../records/records.js';

/** What the balancer's plan remembers between rounds. */
export interface BalancerMemory {
  /** Rounds in a row each group was out of balance. */
  streaks: Map<string, number>;
  /**
   * Per owner (ownerSideKey), rounds in a row it was above its group's mean
   * (positive) or below it (negative), so that load swinging between owners
   * from round to round never counts as a lasting imbalance.
   */
  sides: Map<string, number>;
  /** When each topic last moved, for whatever reason (shedding waits out the cooldown after any move). */
  movedAtMs: Map<string, number>;
  /** When each topic was last shed (a join move waits out the cooldown only after a shed, never after a join). */
  shedAtMs: Map<string, number>;
  /**
   * Per owner (ownerSideKey), when the last move that took a topic from it or
   * brought one to it ended: until the owner reports a load measured wholly
   * after that, its rates still count the topic that left (or miss the one
   * that came), and shedding leaves it alone.
   */
  ownerMovedAtMs: Map<string, number>;
}

export function emptyBalancerMemory(): BalancerMemory {
  return { streaks: new Map(), sides: new Map(), movedAtMs: new Map(), shedAtMs: new Map(), ownerMovedAtMs: new Map() };
}

/** The key of an owner's entries in BalancerMemory.sides and BalancerMemory.ownerMovedAtMs. */
export function ownerSideKey(groupKey: string, instanceId: string): string {
  return `${groupKey}\n${instanceId}`;
}

/**
 * Whether the owner's last reported load was measured wholly after the last
 * move in or out of it ended (its interval began after it), so its rates are
 * those of the topics it holds now. An owner that reports no load (an older
 * version) is weighed by the topics it holds, which its leases say as they
 * are: a move leaves nothing stale there.
 */
export function loadSettledSinceMove(
  memory: BalancerMemory,
  groupKey: string,
  owner: Pick<OwnerRecord, 'instanceId' | 'load' | 'loadReportedAtMs'>,
): boolean {
  const movedAtMs = memory.ownerMovedAtMs.get(ownerSideKey(groupKey, owner.instanceId));
  if (movedAtMs === undefined || owner.load === undefined || owner.loadReportedAtMs === undefined) return true;
  return owner.loadReportedAtMs - owner.load.intervalMs >= movedAtMs;
}
