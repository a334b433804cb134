import type { OwnerRecord } from './records.js';
import { placeTopic } from './placement.js';
import { rendezvousPick } from './rendezvous.js';

/** The balancer's bounds (config.ts names them as settings, with their defaults). */
export interface BalancerSettings {
  balancerIntervalMs: number;
  /** Moves started per round, over every group. */
  balancerMaxMovesPerRound: number;
  /** An owner more than this far from its group's mean load (percent) is out of balance. */
  balancerThresholdPercent: number;
  /** Rounds in a row a group must be out of balance before topics are shed (the window). */
  balancerWindowRounds: number;
  /** A topic the balancer moved is not moved again for this long (hysteresis). */
  balancerTopicCooldownMs: number;
  /** An owner registered this recently has joined: topics whose placement points at it move to it. */
  balancerJoinWindowMs: number;
  /** Messages per second (in and out) that weigh as much as owning one topic. */
  balancerMessagesPerTopic: number;
}

/** One owner as a round sees it: its record and the topics it holds a live lease on. */
export interface OwnerTopics {
  owner: OwnerRecord;
  topics: string[];
}

export interface PlannedMove {
  topic: string;
  from: OwnerRecord;
  to: OwnerRecord;
  reason: string;
}

/** What the plan remembers between rounds: imbalance streaks per group, and when topics last moved. */
export interface BalancerMemory {
  streaks: Map<string, number>;
  movedAtMs: Map<string, number>;
}

/**
 * An owner's load: the topics it owns, plus its message rate in topics'
 * worth (an idle group balances by topic count, a busy one by traffic).
 */
export function ownerLoad(entry: OwnerTopics, settings: BalancerSettings): number {
  const load = entry.owner.load;
  const messages = load === undefined ? 0 : load.messagesInPerSecond + load.messagesOutPerSecond;
  return entry.topics.length + messages / settings.balancerMessagesPerTopic;
}

/** Joins: topics whose rendezvous placement over the group's owners now names an owner that joined recently. */
function joinMoves(group: OwnerTopics[], nowMs: number, settings: BalancerSettings): PlannedMove[] {
  const owners = group.map((entry) => entry.owner);
  const joined = new Set(
    owners
      .filter((owner) => owner.registeredAtMs > nowMs - settings.balancerJoinWindowMs && owner.draining !== true)
      .map((owner) => owner.instanceId),
  );
  if (joined.size === 0 || joined.size === owners.length) return [];
  const moves: PlannedMove[] = [];
  for (const entry of group) {
    for (const topic of entry.topics) {
      const placed = placeTopic(owners, topic);
      if (placed !== undefined && placed.instanceId !== entry.owner.instanceId && joined.has(placed.instanceId)) {
        moves.push({ topic, from: entry.owner, to: placed, reason: `placement: ${placed.instanceId} joined` });
      }
    }
  }
  return moves;
}

/**
 * Shedding: while the most and the least loaded owner of the group are
 * further apart than the threshold of the mean, a topic goes from the first
 * to the second (preferring topics rendezvous hashing would place on the
 * receiver among the two, then the oldest moved), within `budget` moves.
 */
function shedMoves(
  group: OwnerTopics[],
  memory: BalancerMemory,
  nowMs: number,
  settings: BalancerSettings,
  budget: number,
): PlannedMove[] {
  const entries = group
    .filter((entry) => entry.owner.draining !== true)
    .map((entry) => ({ entry, topics: [...entry.topics], load: ownerLoad(entry, settings) }));
  if (entries.length < 2) return [];
  const mean = entries.reduce((sum, each) => sum + each.load, 0) / entries.length;
  const band = (settings.balancerThresholdPercent / 100) * mean;
  const moves: PlannedMove[] = [];
  while (moves.length < budget) {
    entries.sort((a, b) => b.load - a.load);
    const hot = entries[0]!;
    const cold = entries[entries.length - 1]!;
    const perTopic = hot.topics.length === 0 ? 0 : hot.load / hot.topics.length;
    // Moving one topic must narrow the gap, not swap who is hot; and with no per-topic rates at hand, an owner
    // hot by traffic on few topics keeps them (moving its idle topics away would not cool it).
    if (hot.load - cold.load <= band || perTopic === 0 || hot.load - cold.load <= perTopic) break;
    if (hot.topics.length <= cold.topics.length + 1) break;
    const movable = hot.topics.filter(
      (topic) => nowMs - (memory.movedAtMs.get(topic) ?? -Infinity) >= settings.balancerTopicCooldownMs,
    );
    if (movable.length === 0) break;
    const pair = [hot.entry.owner, cold.entry.owner];
    const topic =
      movable.find((each) => rendezvousPick(pair, (owner) => owner.instanceId, each) === cold.entry.owner) ??
      movable[0]!;
    hot.topics.splice(hot.topics.indexOf(topic), 1);
    cold.topics.push(topic);
    hot.load -= perTopic;
    cold.load += perTopic;
    const percent = Math.round(((hot.load + perTopic - mean) / Math.max(mean, 1e-9)) * 100);
    moves.push({
      topic,
      from: hot.entry.owner,
      to: cold.entry.owner,
      reason: `shed: ${hot.entry.owner.instanceId} was ${percent}% above its group's mean load ${mean.toFixed(1)}`,
    });
  }
  return moves;
}

/** True when some owner of the group is further from the mean than the threshold. */
export function outOfBalance(group: OwnerTopics[], settings: BalancerSettings): boolean {
  const loads = group.filter((entry) => entry.owner.draining !== true).map((entry) => ownerLoad(entry, settings));
  if (loads.length < 2) return false;
  const mean = loads.reduce((sum, load) => sum + load, 0) / loads.length;
  const band = (settings.balancerThresholdPercent / 100) * mean;
  return loads.some((load) => Math.abs(load - mean) > band);
}

/**
 * One round's moves for one owner group: joins first (they follow
 * placement, so they never fight it), shedding only when no join is pending
 * and the group stayed out of balance for the window.
 */
export function planGroup(
  groupKey: string,
  group: OwnerTopics[],
  memory: BalancerMemory,
  nowMs: number,
  settings: BalancerSettings,
  budget: number,
): { moves: PlannedMove[]; decision: string } {
  const cooled = (move: PlannedMove): boolean =>
    nowMs - (memory.movedAtMs.get(move.topic) ?? -Infinity) >= settings.balancerTopicCooldownMs;
  const joins = joinMoves(group, nowMs, settings).filter(cooled);
  if (joins.length > 0) {
    memory.streaks.set(groupKey, 0);
    return { moves: joins.slice(0, budget), decision: `${joins.length} topic(s) follow placement to joined owners` };
  }
  if (!outOfBalance(group, settings)) {
    memory.streaks.set(groupKey, 0);
    return { moves: [], decision: `within ${settings.balancerThresholdPercent}% of the mean` };
  }
  const streak = (memory.streaks.get(groupKey) ?? 0) + 1;
  memory.streaks.set(groupKey, streak);
  if (streak < settings.balancerWindowRounds) {
    return { moves: [], decision: `out of balance for ${streak} of ${settings.balancerWindowRounds} rounds` };
  }
  const moves = shedMoves(group, memory, nowMs, settings, budget);
  return { moves, decision: `out of balance for ${streak} rounds: shedding ${moves.length} topic(s)` };
}
