import type { OwnerRecord } from '../records/records.js';
import { placeTopic } from './placement.js';
import { rendezvousPick } from '@ledgerline/metadata-contract';

/** The balancer's bounds (config.ts names them as settings, with their defaults). */
export interface BalancerSettings {
  balancerIntervalMs: number;
  /** Shed moves started per round, over every group. */
  balancerMaxMovesPerRound: number;
  /** Join moves (topics following placement to owners that joined) started per round, over every group. */
  balancerMaxJoinMovesPerRound: number;
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
  /** When the owner took each topic's lease (by lookup or transfer); a topic missing here counts as held for long. */
  acquiredAtMs?: ReadonlyMap<string, number>;
}

export interface PlannedMove {
  topic: string;
  from: OwnerRecord;
  to: OwnerRecord;
  /** `join`: the topic follows placement to an owner that joined; `shed`: it leaves an owner loaded too long. */
  kind: 'join' | 'shed';
  reason: string;
}

/** What the plan remembers between rounds. */
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
}

export function emptyBalancerMemory(): BalancerMemory {
  return { streaks: new Map(), sides: new Map(), movedAtMs: new Map(), shedAtMs: new Map() };
}

/** The key of an owner's side streak in BalancerMemory.sides. */
export function ownerSideKey(groupKey: string, instanceId: string): string {
  return `${groupKey}\n${instanceId}`;
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

/**
 * How long a shed is remembered against join moves: the cooldown, and at least
 * the join window, so that a topic shed away from an owner that joined is not
 * pulled back to it while it still counts as joined.
 */
export function shedMemoryMs(settings: BalancerSettings): number {
  return Math.max(settings.balancerTopicCooldownMs, settings.balancerJoinWindowMs);
}

/** Joins: topics whose rendezvous placement over the group's owners now names an owner that joined recently. */
function joinMoves(group: OwnerTopics[], nowMs: number, settings: BalancerSettings): PlannedMove[] {
  const owners = group.map((entry) => entry.owner);
  const joined = new Set(
    owners
      .filter((owner) => owner.registeredAtMs > nowMs - settings.balancerJoinWindowMs && owner.draining !== true)
      .map((owner) => owner.instanceId),
  );
  // Every owner may have joined (a group scaled out soon after it started): placement then decides for all of them.
  if (joined.size === 0) return [];
  const moves: PlannedMove[] = [];
  for (const entry of group) {
    for (const topic of entry.topics) {
      const placed = placeTopic(owners, topic);
      if (placed === undefined || placed.instanceId === entry.owner.instanceId || !joined.has(placed.instanceId))
        continue;
      // Only a topic its owner took before the joined owner registered was placed without it: one looked up or
      // transferred (by an operator, say) since was placed knowing it, and moving it would undo that.
      if ((entry.acquiredAtMs?.get(topic) ?? -Infinity) < placed.registeredAtMs) {
        moves.push({
          topic,
          from: entry.owner,
          to: placed,
          kind: 'join',
          reason: `placement: ${placed.instanceId} joined`,
        });
      }
    }
  }
  return moves;
}

/**
 * Each topic's share of an owner's load: one for owning it, plus its traffic
 * in topics' worth. The owner's busiest topics come with their rates; the
 * rest of its traffic is spread evenly over the others. `known` says whether
 * the owner reported per-topic rates at all.
 */
function topicWeights(
  entry: OwnerTopics,
  settings: BalancerSettings,
): { weights: Map<string, number>; known: boolean } {
  const load = entry.owner.load;
  const reported = load?.busiestTopics;
  const held = new Set(entry.topics);
  const listed = (reported ?? []).filter((each) => held.has(each.topic));
  const total = load === undefined ? 0 : load.messagesInPerSecond + load.messagesOutPerSecond;
  const rest = Math.max(0, total - listed.reduce((sum, each) => sum + each.messagesPerSecond, 0));
  const others = entry.topics.length - listed.length;
  const weights = new Map<string, number>();
  for (const topic of entry.topics)
    weights.set(topic, 1 + (others === 0 ? 0 : rest / others / settings.balancerMessagesPerTopic));
  for (const each of listed) weights.set(each.topic, 1 + each.messagesPerSecond / settings.balancerMessagesPerTopic);
  // An empty report with traffic (an owner's first interval, topics loaded since) says nothing per topic either.
  return { weights, known: reported !== undefined && (listed.length > 0 || total === 0) };
}

/**
 * Shedding: while the most and the least loaded owner of the group are
 * further apart than the threshold of the mean, a topic goes from the first
 * to the second, within `budget` moves. The topic is the one whose share of
 * the load (its traffic, from the owner's busiest topics) best halves the
 * gap, so a busy topic goes before idle ones and none swaps who is hot;
 * among equals, one rendezvous hashing would place on the receiver. Only an
 * owner that stayed above the mean for the window sheds, and only one that
 * stayed below it receives: load that swings between owners faster than the
 * window moves nothing, whichever owner is hot in the round at hand.
 */
function shedMoves(
  groupKey: string,
  group: OwnerTopics[],
  memory: BalancerMemory,
  nowMs: number,
  settings: BalancerSettings,
  budget: number,
): PlannedMove[] {
  const entries = group
    .filter((entry) => entry.owner.draining !== true)
    .map((entry) => ({
      entry,
      ...topicWeights(entry, settings),
      load: ownerLoad(entry, settings),
      side: memory.sides.get(ownerSideKey(groupKey, entry.owner.instanceId)) ?? 0,
    }));
  if (entries.length < 2) return [];
  const mean = entries.reduce((sum, each) => sum + each.load, 0) / entries.length;
  const band = (settings.balancerThresholdPercent / 100) * mean;
  const senders = entries.filter((each) => each.side >= settings.balancerWindowRounds);
  const receivers = entries.filter((each) => each.side <= -settings.balancerWindowRounds);
  if (senders.length === 0 || receivers.length === 0) return [];
  const moves: PlannedMove[] = [];
  while (moves.length < budget) {
    const hot = senders.reduce((most, each) => (each.load > most.load ? each : most));
    const cold = receivers.reduce((least, each) => (each.load < least.load ? each : least));
    const gap = hot.load - cold.load;
    if (gap <= band) break;
    // Without per-topic rates, an owner hot by traffic on few topics keeps them: its idle ones would not cool it.
    if (!hot.known && hot.weights.size <= cold.weights.size + 1) break;
    const pair = [hot.entry.owner, cold.entry.owner];
    let best: { topic: string; weight: number; miss: number; keepsSides: boolean; placed: boolean } | undefined;
    for (const [topic, weight] of hot.weights) {
      // A move must narrow the gap: a topic worth the whole gap or more would only swap who is hot.
      if (weight >= gap || nowMs - (memory.movedAtMs.get(topic) ?? -Infinity) < settings.balancerTopicCooldownMs)
        continue;
      const miss = Math.abs(gap - 2 * weight);
      if (best !== undefined && miss > best.miss) continue;
      // Among moves that narrow it as much, one that leaves the hot owner hot goes first, then placement's.
      const keepsSides = 2 * weight <= gap;
      const placed = rendezvousPick(pair, (owner) => owner.instanceId, topic) === cold.entry.owner;
      const better =
        best === undefined ||
        miss < best.miss ||
        (keepsSides && !best.keepsSides) ||
        (keepsSides === best.keepsSides && placed && !best.placed);
      if (better) best = { topic, weight, miss, keepsSides, placed };
    }
    if (best === undefined) break;
    hot.weights.delete(best.topic);
    cold.weights.set(best.topic, best.weight);
    hot.load -= best.weight;
    cold.load += best.weight;
    const percent = Math.round(((hot.load + best.weight - mean) / Math.max(mean, 1e-9)) * 100);
    const traffic = (best.weight - 1) * settings.balancerMessagesPerTopic;
    moves.push({
      topic: best.topic,
      from: hot.entry.owner,
      to: cold.entry.owner,
      kind: 'shed',
      reason:
        `shed: ${hot.entry.owner.instanceId} was ${percent}% above its group's mean load ${mean.toFixed(1)}` +
        (traffic >= 0.05 ? `; the topic carried ${traffic.toFixed(1)} msg/s` : ''),
    });
  }
  return moves;
}

/** Counts, per owner of the group, the rounds in a row it was above (positive) or below (negative) the mean. */
function trackSides(groupKey: string, group: OwnerTopics[], memory: BalancerMemory, settings: BalancerSettings): void {
  const serving = group.filter((entry) => entry.owner.draining !== true);
  const loads = serving.map((entry) => ownerLoad(entry, settings));
  const mean = loads.reduce((sum, load) => sum + load, 0) / Math.max(1, loads.length);
  for (const entry of group) {
    const key = ownerSideKey(groupKey, entry.owner.instanceId);
    const index = serving.indexOf(entry);
    const previous = memory.sides.get(key) ?? 0;
    if (index === -1 || loads[index] === mean) memory.sides.set(key, 0);
    else if (loads[index]! > mean) memory.sides.set(key, Math.max(previous, 0) + 1);
    else memory.sides.set(key, Math.min(previous, 0) - 1);
  }
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
 * placement, so they never fight it), within `joinBudget`; shedding, within
 * `budget`, only when no join is pending and the group stayed out of balance
 * for the window. A topic that followed placement to one joined owner may
 * follow it again to the next one that joins (placement only ever moves it
 * forward); only a shed topic waits (shedMemoryMs) before it follows
 * placement, so a join never pulls back a topic shedding moved away.
 */
export function planGroup(
  groupKey: string,
  group: OwnerTopics[],
  memory: BalancerMemory,
  nowMs: number,
  settings: BalancerSettings,
  budget: number,
  joinBudget = settings.balancerMaxJoinMovesPerRound,
): { moves: PlannedMove[]; decision: string } {
  trackSides(groupKey, group, memory, settings);
  const notJustShed = (move: PlannedMove): boolean =>
    nowMs - (memory.shedAtMs.get(move.topic) ?? -Infinity) >= shedMemoryMs(settings);
  const joins = joinMoves(group, nowMs, settings).filter(notJustShed);
  if (joins.length > 0) {
    memory.streaks.set(groupKey, 0);
    return {
      moves: joins.slice(0, joinBudget),
      decision: `${joins.length} topic(s) follow placement to joined owners`,
    };
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
  const moves = shedMoves(groupKey, group, memory, nowMs, settings, budget);
  return { moves, decision: `out of balance for ${streak} rounds: shedding ${moves.length} topic(s)` };
}
