import type { OwnerRecord } from '../records/records.js';
import { placeTopic } from './placement.js';
import { rendezvousPick } from '@ledgerline/metadata-contract';
import { loadSettledSinceMove, ownerSideKey, type BalancerMemory } from './balancer-memory.js';

export { emptyBalancerMemory, ownerSideKey, type BalancerMemory } from './balancer-memory.js';

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

/** An owner as levelling sees it: its topics' shares of its load, and the load they add up to. */
interface Scale {
  entry: OwnerTopics;
  weights: Map<string, number>;
  /** Whether the owner reported per-topic rates (weights then follow traffic, not only counts). */
  known: boolean;
  load: number;
}

function scaleOf(entry: OwnerTopics, settings: BalancerSettings): Scale {
  return { entry, ...topicWeights(entry, settings), load: ownerLoad(entry, settings) };
}

/**
 * Moves topics from the most loaded of `senders` to the least loaded of
 * `receivers` until every one of them is within the band of the group's
 * `mean` (not merely until those two are: an owner left 25% over the mean
 * while the others sit close to it is what balancing to a threshold of the
 * gap leaves behind), within `budget` moves. The topic is the one whose
 * share of the load best halves the gap between the two, so a busy topic goes
 * before idle ones and none swaps who is hot; among equals, one rendezvous
 * hashing would place on the receiver. `movable` says which topics may go.
 * The scales are updated as the moves are planned.
 */
function levelMoves(
  senders: Scale[],
  receivers: Scale[],
  mean: number,
  settings: BalancerSettings,
  budget: number,
  movable: (topic: string) => boolean,
  move: (topic: string, from: Scale, to: Scale, weight: number) => PlannedMove,
): PlannedMove[] {
  const band = (settings.balancerThresholdPercent / 100) * mean;
  const moves: PlannedMove[] = [];
  while (moves.length < budget && senders.length > 0 && receivers.length > 0) {
    const hot = senders.reduce((most, each) => (each.load > most.load ? each : most));
    const cold = receivers.reduce((least, each) => (each.load < least.load ? each : least));
    if (hot === cold || (hot.load - mean <= band && mean - cold.load <= band)) break;
    const gap = hot.load - cold.load;
    // Without per-topic rates, an owner hot by traffic on few topics keeps them: its idle ones would not cool it.
    if (!hot.known && hot.weights.size <= cold.weights.size + 1) break;
    const best = bestTopic(hot, cold, gap, movable);
    if (best === undefined) break;
    hot.weights.delete(best.topic);
    cold.weights.set(best.topic, best.weight);
    hot.load -= best.weight;
    cold.load += best.weight;
    moves.push(move(best.topic, hot, cold, best.weight));
  }
  return moves;
}

/** The topic of `hot` whose share best halves `gap`, never one worth the whole gap (that would swap who is hot). */
function bestTopic(
  hot: Scale,
  cold: Scale,
  gap: number,
  movable: (topic: string) => boolean,
): { topic: string; weight: number } | undefined {
  const pair = [hot.entry.owner, cold.entry.owner];
  let best: { topic: string; weight: number; miss: number; keepsSides: boolean; placed: boolean } | undefined;
  for (const [topic, weight] of hot.weights) {
    if (weight >= gap || !movable(topic)) continue;
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
  return best;
}

/**
 * Shedding: while some owner of the group is further from the mean than the
 * threshold, topics go from the most loaded owner to the least loaded
 * (levelMoves), within `budget` moves. Only an owner that stayed above the
 * mean for the window sheds, and only one that stayed below it receives:
 * load that swings between owners faster than the window moves nothing,
 * whichever owner is hot in the round at hand.
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
      settled: loadSettledSinceMove(memory, groupKey, entry.owner),
      scale: scaleOf(entry, settings),
      side: memory.sides.get(ownerSideKey(groupKey, entry.owner.instanceId)) ?? 0,
    }));
  if (entries.length < 2) return [];
  const mean = entries.reduce((sum, each) => sum + each.scale.load, 0) / entries.length;
  // An owner a topic left or reached since its last report still carries (or lacks) that topic's traffic in it.
  const senders = entries
    .filter((each) => each.settled && each.side >= settings.balancerWindowRounds)
    .map((each) => each.scale);
  const receivers = entries
    .filter((each) => each.settled && each.side <= -settings.balancerWindowRounds)
    .map((each) => each.scale);
  const cooledDown = (topic: string) =>
    nowMs - (memory.movedAtMs.get(topic) ?? -Infinity) >= settings.balancerTopicCooldownMs;
  return levelMoves(senders, receivers, mean, settings, budget, cooledDown, (topic, hot, cold, weight) => {
    const percent = Math.round(((hot.load + weight - mean) / Math.max(mean, 1e-9)) * 100);
    const traffic = (weight - 1) * settings.balancerMessagesPerTopic;
    return {
      topic,
      from: hot.entry.owner,
      to: cold.entry.owner,
      kind: 'shed',
      reason:
        `shed: ${hot.entry.owner.instanceId} was ${percent}% above its group's mean load ${mean.toFixed(1)}` +
        (traffic >= 0.05 ? `; the topic carried ${traffic.toFixed(1)} msg/s` : ''),
    };
  });
}

/**
 * After the join moves of a round, the group as they leave it is levelled to the mean in the same
 * round: placement over a few owners is uneven (120 topics over six owners by rendezvous hashing came
 * out as 16 25 22 22 17 18), and waiting for shedding's window to correct it would take minutes. A
 * join is taken only while it leaves its receiver and its sender within the band and narrows their
 * gap, as levelling's moves do: one that does not stays, planned and left again in every round of the
 * join window, so a levelled group moves nothing (taking it moved topics a round in a settled group,
 * swapping which of two equal owners held one more). A taken join that levelling moves on goes
 * straight to the owner levelling picks instead (or stays), so no topic moves twice; the other moves
 * count as joins too (the owners joined are their reason, no window applies) and, once made, stay:
 * their topics were taken after the joined owners registered, so later join moves leave them.
 * Returns the round's moves: the joins as levelled, then the further moves.
 */
function levelAfterJoins(
  group: OwnerTopics[],
  joins: PlannedMove[],
  memory: BalancerMemory,
  nowMs: number,
  settings: BalancerSettings,
  budget: number,
): PlannedMove[] {
  const scales = group.filter((entry) => entry.owner.draining !== true).map((entry) => scaleOf(entry, settings));
  if (scales.length < 2) return joins;
  const byOwner = new Map(scales.map((scale) => [scale.entry.owner.instanceId, scale]));
  // A draining owner is outside the scales: what its joins bring in counts towards the mean.
  const arriving = joins.filter((join) => !byOwner.has(join.from.instanceId)).length;
  const mean = (scales.reduce((sum, scale) => sum + scale.load, 0) + arriving) / scales.length;
  const band = (settings.balancerThresholdPercent / 100) * mean;
  const joining = new Map<string, PlannedMove>();
  for (const join of joins) {
    const from = byOwner.get(join.from.instanceId);
    const to = byOwner.get(join.to.instanceId);
    const weight = from?.weights.get(join.topic) ?? 1;
    const fits =
      to !== undefined &&
      to.load + weight <= mean + band &&
      (from === undefined || (from.load - weight >= mean - band && weight < from.load - to.load));
    if (!fits) continue;
    joining.set(join.topic, { ...join });
    from?.weights.delete(join.topic);
    if (from !== undefined) from.load -= weight;
    to.weights.set(join.topic, weight);
    to.load += weight;
  }
  const cooledDown = (topic: string) =>
    joining.has(topic) || nowMs - (memory.movedAtMs.get(topic) ?? -Infinity) >= settings.balancerTopicCooldownMs;
  const further = levelMoves(scales, scales, mean, settings, budget, cooledDown, (topic, hot, cold, weight) => {
    const over = Math.round(((hot.load + weight - mean) / Math.max(mean, 1e-9)) * 100);
    const reason = `level after joins: ${hot.entry.owner.instanceId} would be ${over}% above the mean load ${mean.toFixed(1)}`;
    return { topic, from: hot.entry.owner, to: cold.entry.owner, kind: 'join', reason };
  });
  const levelled: PlannedMove[] = [];
  for (const move of further) {
    const join = joining.get(move.topic);
    if (join === undefined) levelled.push(move);
    else if (join.from.instanceId === move.to.instanceId) joining.delete(move.topic);
    else joining.set(move.topic, { ...join, to: move.to, reason: move.reason });
  }
  return [...joining.values(), ...levelled];
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
  // Levelling waits until every join fits in one round's budget: it plans from where the joins leave the group.
  const moves =
    joins.length > 0 && joins.length <= joinBudget
      ? levelAfterJoins(group, joins, memory, nowMs, settings, joinBudget - joins.length)
      : joins.slice(0, joinBudget);
  // A topic that levelling kept where it is stays a join by placement in later rounds, and is kept again: only
  // when such rounds move nothing may shedding look at the group.
  if (moves.length > 0) {
    memory.streaks.set(groupKey, 0);
    const levelled = moves.filter((move) => move.reason.startsWith('level')).length;
    return {
      moves,
      decision:
        `${moves.length} topic(s) follow placement to joined owners` +
        (levelled > 0 ? ` (${levelled} of them where they level the group to the mean instead)` : ''),
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
  const shed = shedMoves(groupKey, group, memory, nowMs, settings, budget);
  return { moves: shed, decision: `out of balance for ${streak} rounds: shedding ${shed.length} topic(s)` };
}
