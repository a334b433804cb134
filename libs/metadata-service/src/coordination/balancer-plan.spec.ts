import {
  emptyBalancerMemory,
  planGroup,
  type BalancerMemory,
  type OwnerTopics,
  type PlannedMove,
} from './balancer-plan.js';
import { resolveBalancerSettings } from '../config.js';
import { placeTopic } from './placement.js';
import { rendezvousPick } from '@ledgerline/metadata-contract';
import type { OwnerRecord } from '../records/records.js';
import { messagesInLoad } from '../testing/spec-support.js';

const settings = resolveBalancerSettings({ balancerWindowRounds: 2, balancerMaxMovesPerRound: 1_000 });
const planSettings = settings;
const HOUR = 3_600_000;

function owner(instanceId: string, registeredAtMs: number, messagesPerSecond = 0): OwnerRecord {
  return {
    instanceId,
    role: 'writer',
    group: 'g',
    advertisedAddress: `${instanceId}:6650`,
    sessionId: `s-${instanceId}`,
    ttlMs: 10_000,
    expiresAtMs: Number.MAX_SAFE_INTEGER,
    registeredAtMs,
    load: messagesInLoad(messagesPerSecond),
  };
}

const topics = (count: number, prefix = 't') =>
  Array.from({ length: count }, (_, i) => `persistent://a/b/${prefix}${i}`);
const memory = (): BalancerMemory => emptyBalancerMemory();

describe('the balancer plan', () => {
  it('moves to a joined owner exactly the topics placement now gives it, and only those', () => {
    const now = 10 * HOUR;
    const old = [owner('a', 0), owner('b', 0)];
    const all = topics(300);
    const group: OwnerTopics[] = [
      { owner: old[0]!, topics: all.slice(0, 150) },
      { owner: old[1]!, topics: all.slice(150) },
      { owner: owner('c', now - 1_000), topics: [] },
    ];
    const { moves, decision } = planGroup('g', group, memory(), now, settings, 1_000);
    expect(moves.every((move) => move.to.instanceId === 'c' && move.reason.includes('joined'))).toBe(true);
    // About a third of the topics (rendezvous over three owners), never all, never none.
    expect(moves.length).toBeGreaterThan(60);
    expect(moves.length).toBeLessThan(140);
    expect(decision).toContain('placement');
  });

  it('sheds only after the window, and stops within the threshold', () => {
    const now = 10 * HOUR;
    const group: OwnerTopics[] = [
      { owner: owner('a', 0), topics: topics(90, 'a') },
      { owner: owner('b', 0), topics: topics(10, 'b') },
    ];
    const remembered = memory();
    expect(planGroup('g', group, remembered, now, settings, 1_000).moves).toEqual([]);
    const { moves } = planGroup('g', group, remembered, now + 1, settings, 1_000);
    expect(moves.every((move) => move.from.instanceId === 'a' && move.to.instanceId === 'b')).toBe(true);
    const after = 90 - moves.length;
    const mean = 50;
    expect(Math.abs(after - mean)).toBeLessThanOrEqual((settings.balancerThresholdPercent / 100) * mean);
    expect(moves.length).toBeLessThan(40);
  });

  it('never moves a topic again within its cooldown, and weighs traffic as topics', () => {
    const now = 10 * HOUR;
    const remembered = memory();
    const busy = topics(14, 'busy');
    // a carries 2,000 msg/s on 14 topics: 34 topics' worth at 100 msg/s per topic, against b's 10.
    const group: OwnerTopics[] = [
      { owner: owner('a', 0, 2_000), topics: busy },
      { owner: owner('b', 0), topics: topics(10, 'idle') },
    ];
    for (const topic of busy) remembered.movedAtMs.set(topic, now - 1_000);
    planGroup('g', group, remembered, now, settings, 1_000);
    expect(planGroup('g', group, remembered, now + 1, settings, 1_000).moves).toEqual([]);
    remembered.movedAtMs.clear();
    const moves = planGroup('g', group, remembered, now + 2, settings, 1_000).moves;
    // Without per-topic rates, a sheds topics only while it holds more of them than b: it is not stripped bare.
    expect(moves.length).toBe(2);
    expect(moves.every((move) => move.from.instanceId === 'a')).toBe(true);
    // Bounded: one move per round when the budget says so.
    remembered.movedAtMs.clear();
    expect(planGroup('g', group, remembered, now + 3, settings, 1).moves).toHaveLength(1);
  });

  it('sheds the busiest topic first when the owner reports per-topic rates, never one that swaps who is hot', () => {
    const now = 10 * HOUR;
    const remembered = memory();
    const held = topics(5, 'a');
    // a: 5 topics and 800 msg/s, 700 of them on a0 and 100 on a1 (13 topics' worth); b: 5 idle topics.
    const hot = owner('a', 0, 800);
    hot.load!.busiestTopics = [
      { topic: held[0]!, messagesPerSecond: 700 },
      { topic: held[1]!, messagesPerSecond: 100 },
    ];
    const group: OwnerTopics[] = [
      { owner: hot, topics: held },
      { owner: owner('b', 0), topics: topics(5, 'b') },
    ];
    planGroup('g', group, remembered, now, settings, 1_000);
    const { moves } = planGroup('g', group, remembered, now + 1, settings, 1_000);
    // a0 (8 topics' worth) would leave a at 5 and b at 13: a1 (2) and an idle topic narrow the gap instead.
    // With the band at 10% of the mean (0.9 here), a third topic brings both to the mean of 9.
    expect(moves.map((move) => move.topic)).toEqual([
      held[1],
      expect.stringMatching(/\/a[234]$/),
      expect.stringMatching(/\/a[234]$/),
    ]);
    expect(moves[0]!.reason).toContain('the topic carried 100.0 msg/s');
    // Its busy topic moves once the gap is wide enough for it, and no further.
    hot.load!.busiestTopics = [{ topic: held[0]!, messagesPerSecond: 800 }];
    group[0]!.topics = [...held, ...topics(12, 'more')];
    group[1]!.topics = topics(5, 'b');
    const wide = planGroup('g', group, remembered, now + 2, settings, 1_000).moves;
    expect(wide[0]!.topic).toBe(held[0]);
    expect(wide).toHaveLength(1);
  });
});

describe('the balancer plan when owners join', () => {
  const now = 10 * HOUR;
  const all = topics(600);

  it('bounds join moves by their own setting, not by the shed bound', () => {
    const group: OwnerTopics[] = [
      { owner: owner('a', 0), topics: all.slice(0, 300) },
      { owner: owner('b', 0), topics: all.slice(300) },
      { owner: owner('c', now - 1_000), topics: [] },
    ];
    const joinSettings = { ...settings, balancerMaxMovesPerRound: 10, balancerMaxJoinMovesPerRound: 1_000 };
    const { moves } = planGroup('g', group, memory(), now, joinSettings, 10);
    // About a third of 600 follow placement to c in one round, though only 10 shed moves may start per round.
    expect(moves.length).toBeGreaterThan(150);
    expect(moves.every((move) => move.kind === 'join')).toBe(true);
    expect(planGroup('g', group, memory(), now, joinSettings, 10, 25).moves).toHaveLength(25);
  });

  it('lets a topic follow placement again to the next owner that joins, but not back after a shed', () => {
    // Placement alone: a band wider than any gap keeps levelling out of this.
    const settings = { ...planSettings, balancerThresholdPercent: 1_000 };
    const c = owner('c', now - 2_000);
    const d = owner('d', now - 1_000);
    const remembered = memory();
    const first = planGroup(
      'g',
      [
        { owner: owner('a', 0), topics: all },
        { owner: c, topics: [] },
      ],
      remembered,
      now,
      settings,
      1_000,
    ).moves;
    for (const move of first) remembered.movedAtMs.set(move.topic, now);
    const onC = first.map((move) => move.topic);
    const group: OwnerTopics[] = [
      { owner: owner('a', 0), topics: all.filter((topic) => !onC.includes(topic)) },
      { owner: c, topics: onC },
      { owner: d, topics: [] },
    ];
    const second = planGroup('g', group, remembered, now + 1_000, settings, 1_000).moves;
    expect(second.some((move) => move.from.instanceId === 'c' && move.to.instanceId === 'd')).toBe(true);
    // A topic shed within the cooldown stays where shedding put it, even if placement now names a joined owner.
    const shed = second.filter((move) => move.from.instanceId === 'c').map((move) => move.topic);
    for (const topic of shed) remembered.shedAtMs.set(topic, now);
    const third = planGroup('g', group, remembered, now + 2_000, settings, 1_000).moves;
    expect(third.filter((move) => shed.includes(move.topic))).toEqual([]);
    // Every other join of the second round is still planned (the room the shed ones left may take more).
    const planned = new Set(third.map((move) => `${move.topic} ${move.to.instanceId}`));
    for (const move of second.filter((each) => !shed.includes(each.topic)))
      expect(planned.has(`${move.topic} ${move.to.instanceId}`)).toBe(true);
  });
});

describe('the balancer plan and topics placed after an owner joined', () => {
  it('leaves in place a topic its owner took after the joined owner registered (looked up then, or moved by an operator)', () => {
    const now = 10 * HOUR;
    const all = topics(300);
    const c = owner('c', now - 5_000);
    const group: OwnerTopics[] = [
      { owner: owner('a', 0), topics: all.slice(0, 150) },
      { owner: owner('b', 0), topics: all.slice(150) },
      { owner: c, topics: [] },
    ];
    const before = planGroup('g', group, memory(), now, settings, 1_000).moves;
    expect(before.length).toBeGreaterThan(50);
    // The same topics, now taken after c registered: what placement names c for was placed with c in view.
    const late = (topicsHeld: string[]) => new Map(topicsHeld.map((topic) => [topic, now - 1_000]));
    const lateGroup = group.map((entry) => ({ ...entry, acquiredAtMs: late(entry.topics) }));
    expect(planGroup('g', lateGroup, memory(), now, settings, 1_000).moves).toEqual([]);
    // Taken before c registered, they follow placement as without the map.
    const early = group.map((entry) => ({
      ...entry,
      acquiredAtMs: new Map(entry.topics.map((topic) => [topic, now - 10_000])),
    }));
    expect(planGroup('g', early, memory(), now, settings, 1_000).moves).toHaveLength(before.length);
  });
});

describe('the balancer plan in a group that scales out soon after it started', () => {
  it('moves topics to the owners that joined though every owner registered within the join window', () => {
    const now = 10 * HOUR;
    const all = topics(300);
    // a, b and c started a minute ago and hold every topic (placed among them); d, e and f just registered.
    const first = ['a', 'b', 'c'].map((id) => owner(id, now - 60_000));
    const group: OwnerTopics[] = [
      ...first.map((each) => ({
        owner: each,
        topics: all.filter((topic) => placeTopic(first, topic)?.instanceId === each.instanceId),
      })),
      ...['d', 'e', 'f'].map((id) => ({ owner: owner(id, now - 1_000), topics: [] })),
    ];
    const { moves } = planGroup('g', group, memory(), now, settings, 1_000);
    expect(moves.every((move) => move.kind === 'join' && ['d', 'e', 'f'].includes(move.to.instanceId))).toBe(true);
    // About half the topics (placement over six owners gives the three new ones half).
    expect(moves.length).toBeGreaterThan(110);
    expect(moves.length).toBeLessThan(190);
  });
});

describe('the balancer plan with per-topic rates', () => {
  const now = 10 * HOUR;

  /** Plans two rounds (the window) for `a` holding `held` with `load`, against `b` holding `others`. */
  function shed(held: string[], load: OwnerRecord['load'], others: string[]) {
    const remembered = memory();
    const hot = { ...owner('a', 0), load };
    const group: OwnerTopics[] = [
      { owner: hot, topics: held },
      { owner: owner('b', 0), topics: others },
    ];
    planGroup('g', group, remembered, now, settings, 1_000);
    return planGroup('g', group, remembered, now + 1, settings, 1_000).moves;
  }

  it('prefers, among moves that narrow the gap as much, the one that leaves the hot owner hot', () => {
    const pair = [owner('a', 0), owner('b', 0)];
    // A busy topic that placement would put on b, so that placement alone would pick it.
    const busy = topics(50, 'busy').find((t) => rendezvousPick(pair, (o) => o.instanceId, t)!.instanceId === 'b')!;
    const idle = 'persistent://a/b/idle';
    // a: 2 topics and 600 msg/s on `busy` (8 topics' worth), b: nothing; the gap is 8: `busy` (7) and `idle` (1)
    // both leave it 6, but moving `busy` makes b the hot one.
    const load = { ...messagesInLoad(600), busiestTopics: [{ topic: busy, messagesPerSecond: 600 }] };
    expect(shed([busy, idle], load, [])[0]?.topic).toBe(idle);
  });

  it('keeps the count rule for an owner whose report names no topic though it carries traffic', () => {
    // Its first interval, or its busy topics loaded since the last sample: nothing says where the traffic is.
    const load = { ...messagesInLoad(1_000), busiestTopics: [] };
    expect(shed(topics(2, 'a'), load, topics(1, 'b'))).toEqual([]);
  });
});

describe('the balancer plan levels a group to the mean when owners join', () => {
  const now = 10 * HOUR;
  const first = ['a', 'b', 'c'].map((id) => owner(id, 0));
  const joined = ['d', 'e', 'f'].map((id) => owner(id, now - 1_000));

  /** Every topic on the owner rendezvous hashing picks among the first three, the joined three empty. */
  function placedOnFirst(count: number): OwnerTopics[] {
    const all = topics(count);
    return [
      ...first.map((each) => ({
        owner: each,
        topics: all.filter((topic) => placeTopic(first, topic)?.instanceId === each.instanceId),
      })),
      ...joined.map((each) => ({ owner: each, topics: [] as string[] })),
    ];
  }

  /** The group after `moves`, each topic on its new owner. */
  function applied(group: OwnerTopics[], moves: PlannedMove[]): OwnerTopics[] {
    const to = new Map(moves.map((move) => [move.topic, move.to.instanceId]));
    const held = group.map((entry) => ({ owner: entry.owner, topics: [] as string[] }));
    const byId = new Map(held.map((entry) => [entry.owner.instanceId, entry]));
    for (const entry of group)
      for (const topic of entry.topics) byId.get(to.get(topic) ?? entry.owner.instanceId)!.topics.push(topic);
    return held;
  }

  const farthestFromMean = (group: OwnerTopics[]) => {
    const counts = group.map((entry) => entry.topics.length);
    const mean = counts.reduce((sum, count) => sum + count, 0) / counts.length;
    return Math.max(...counts.map((count) => Math.abs(count - mean))) / mean;
  };

  it.each([120, 1_000])(
    'brings every owner within the threshold of the mean in the round of the joins (%i topics)',
    (count) => {
      const group = placedOnFirst(count);
      const placementOnly = applied(
        group,
        planGroup('g', group, memory(), now, { ...settings, balancerMaxJoinMovesPerRound: 1 }, 1_000).moves,
      );
      expect(placementOnly.reduce((sum, entry) => sum + entry.topics.length, 0)).toBe(count);
      const { moves, decision } = planGroup('g', group, memory(), now, settings, 1_000);
      const after = applied(group, moves);
      expect(farthestFromMean(after)).toBeLessThanOrEqual(settings.balancerThresholdPercent / 100);
      expect(new Set(moves.map((move) => move.topic)).size).toBe(moves.length);
      expect(moves.every((move) => move.kind === 'join')).toBe(true);
      if (moves.some((move) => move.reason.startsWith('level')))
        expect(decision).toContain('level the group to the mean');
    },
  );

  it('levels 120 topics that placement alone leaves 25% over the mean', () => {
    const group = placedOnFirst(120);
    const owners = group.map((entry) => entry.owner);
    const byPlacement = group.map((entry) => ({
      owner: entry.owner,
      topics: group.flatMap((each) => each.topics).filter((topic) => placeTopic(owners, topic) === entry.owner),
    }));
    // What the issue saw: rendezvous hashing over six owners is uneven for 120 topics.
    expect(farthestFromMean(byPlacement)).toBeGreaterThan(settings.balancerThresholdPercent / 100);
    // Levelling in the round of the joins brings it within the band.
    expect(
      farthestFromMean(applied(group, planGroup('g', group, memory(), now, settings, 1_000).moves)),
    ).toBeLessThanOrEqual(settings.balancerThresholdPercent / 100);
  });

  it('moves nothing more once levelled: later rounds, past the window, count no move (no flapping)', () => {
    const remembered = memory();
    let group = placedOnFirst(120);
    const acquiredAtMs = new Map<string, number>();
    let later = 0;
    for (let round = 0; round < 20; round++) {
      const { moves } = planGroup('g', group, remembered, now + round * settings.balancerIntervalMs, settings, 1_000);
      if (round > 0) later += moves.length;
      for (const move of moves) remembered.movedAtMs.set(move.topic, now + round * settings.balancerIntervalMs);
      // A moved topic's lease is taken by its new owner then; the others keep theirs from before the joins.
      const moved = new Set(moves.map((move) => move.topic));
      for (const topic of moved) acquiredAtMs.set(topic, now + round * settings.balancerIntervalMs);
      group = applied(group, moves).map((entry) => ({ ...entry, acquiredAtMs }));
    }
    expect(later).toBe(0);
    expect(farthestFromMean(group)).toBeLessThanOrEqual(settings.balancerThresholdPercent / 100);
  });
});

describe('the balancer plan sheds to the mean, not to a gap', () => {
  it('sheds an owner 25% over the mean though the gap to the least loaded is within the threshold of it', () => {
    const now = 10 * HOUR;
    // 25 18 18 19 20 20: mean 20; the old rule stopped at a gap of 25% of the mean (5 topics) and moved nothing.
    const counts = [25, 18, 18, 19, 20, 20];
    const group: OwnerTopics[] = counts.map((count, index) => ({
      owner: owner(`o${index}`, 0),
      topics: topics(count, `o${index}-`),
    }));
    const remembered = memory();
    const rounds = [0, 1, 2].map((round) => planGroup('g', group, remembered, now + round, settings, 1_000).moves);
    const moves = rounds.flat();
    expect(moves.length).toBeGreaterThan(0);
    expect(moves.every((move) => move.from.instanceId === 'o0' && move.kind === 'shed')).toBe(true);
    expect(25 - moves.length).toBeLessThanOrEqual(20 * (1 + settings.balancerThresholdPercent / 100));
  });
});

describe('the balancer plan with joins the band has no room for', () => {
  /*
   * Owners d and e both joined. A topic taken before e registered that
   * placement now gives e is planned as a join in every round of the join
   * window. When e is at the top of the band, taking the join and levelling
   * after moved two topics every round (the join, and another topic back
   * from e) in a group already within the band: what the real-process spec
   * saw as moves after the group settled.
   */
  const now = 10 * HOUR;
  const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
  const owners = ids.map((id) => owner(id, id === 'd' ? now - 10_000 : id === 'e' ? now - 1_000 : 0));
  const byId = new Map(owners.map((each) => [each.instanceId, each]));
  const pool = topics(5_000, 'p');
  const placedOn = (topic: string) => placeTopic(owners, topic)!.instanceId;
  const pairPicks = (topic: string, a: string, b: string) =>
    rendezvousPick([byId.get(a)!, byId.get(b)!], (each) => each.instanceId, topic)!.instanceId;

  /**
   * Rounds of the plan over a group whose owners hold `counts` topics (in the
   * order of `ids`), with `joining` topics on `sender` that placement gives e
   * (taken before e registered); e's own topics are ones levelling would
   * rather send to `cold`. Returns each round's moves.
   */
  function rounds(counts: number[], sender: string, joining: number, cold: string): PlannedMove[][] {
    const eOwn = pool.filter((topic) => placedOn(topic) !== 'e' && pairPicks(topic, 'e', cold) === cold);
    const joins = pool.filter((topic) => placedOn(topic) === 'e').slice(0, joining);
    const rest = pool.filter((topic) => !eOwn.includes(topic) && !joins.includes(topic));
    const held = new Map<string, string>();
    const acquiredAtMs = new Map<string, number>();
    joins.forEach((topic) => {
      held.set(topic, sender);
      acquiredAtMs.set(topic, now - 5_000);
    });
    eOwn.slice(0, counts[ids.indexOf('e')]).forEach((topic) => held.set(topic, 'e'));
    let next = 0;
    ids.forEach((id, index) => {
      while ([...held.values()].filter((each) => each === id).length < counts[index]!) held.set(rest[next++]!, id);
    });
    for (const topic of held.keys()) if (!acquiredAtMs.has(topic)) acquiredAtMs.set(topic, now);
    const remembered = memory();
    const perRound: PlannedMove[][] = [];
    for (let round = 0; round < 10; round++) {
      const at = now + round * settings.balancerIntervalMs;
      const group: OwnerTopics[] = owners.map((each) => ({
        owner: each,
        topics: [...held].filter(([, id]) => id === each.instanceId).map(([topic]) => topic),
        acquiredAtMs,
      }));
      const { moves } = planGroup('g', group, remembered, at, settings, 1_000);
      perRound.push(moves);
      for (const move of moves) {
        held.set(move.topic, move.to.instanceId);
        acquiredAtMs.set(move.topic, at);
        remembered.movedAtMs.set(move.topic, at);
      }
    }
    return perRound;
  }

  it('takes the joins that fit the band and narrow the gap, and moves nothing in the rounds after', () => {
    // d above the mean, e below it: two of d's three joins fit (22 - 2 >= 18 on d, 18 + 2 <= 22 on e) and narrow
    // the gap between them; the third would leave e above d.
    const perRound = rounds([20, 20, 20, 22, 18, 20], 'd', 3, 'd');
    const first = perRound[0]!;
    expect(first).toHaveLength(2);
    for (const move of first) {
      expect(placedOn(move.topic)).toBe('e');
      expect([move.from.instanceId, move.to.instanceId]).toEqual(['d', 'e']);
    }
    expect(perRound.slice(1).flat()).toEqual([]);
  });

  it('moves nothing for placement alone in a group at the mean', () => {
    // Every join fits the band (20 - 1 >= 18, 20 + 1 <= 22) but none narrows a gap: each would only swap which of
    // two equal owners holds one more. Taking them moved reader topics in the rounds after a settled group.
    const perRound = rounds([20, 20, 20, 20, 20, 20], 'd', 3, 'd');
    expect(perRound.flat()).toEqual([]);
  });

  it('moves nothing in a group within the band when a join would put its receiver over it', () => {
    // The settled group of the real-process spec: e at the top of the band, a at its bottom, b holding a join.
    const perRound = rounds([18, 20, 20, 20, 22, 20], 'b', 1, 'a');
    expect(perRound.flat()).toEqual([]);
  });
});

describe('the balancer plan after a move', () => {
  /*
   * Two busy topics on a, five idle on b. Once one busy topic has gone to b,
   * a's next report still counts its traffic for the part of the interval
   * before it left: read as it stands, a is still hot and sheds the other
   * busy topic after it, and both end on b together.
   */
  it('leaves an owner out of shedding until it reports a load measured wholly after its last move', () => {
    const now = 10 * HOUR;
    const [hotA, hotB] = topics(2, 'hot') as [string, string];
    const a = owner('a', 0, 600);
    a.load!.busiestTopics = [{ topic: hotB, messagesPerSecond: 300 }];
    a.loadReportedAtMs = now + 500;
    const b = owner('b', 0, 150);
    b.load!.busiestTopics = [{ topic: hotA, messagesPerSecond: 150 }];
    b.loadReportedAtMs = now + 500;
    const group: OwnerTopics[] = [
      { owner: a, topics: [hotB, ...topics(3, 'a')] },
      { owner: b, topics: [hotA, ...topics(5, 'b')] },
    ];
    const remembered = memory();
    remembered.sides.set('g\na', settings.balancerWindowRounds);
    remembered.sides.set('g\nb', -settings.balancerWindowRounds);
    remembered.streaks.set('g', settings.balancerWindowRounds);
    // hotA left a for b at `now`: both reports (intervals of 1 s ending at now + 500) began before it.
    remembered.ownerMovedAtMs.set('g\na', now);
    remembered.ownerMovedAtMs.set('g\nb', now);
    remembered.movedAtMs.set(hotA, now);
    const stale = planGroup('g', group, remembered, now + 600, settings, 1_000);
    expect(stale.moves).toEqual([]);
    // The same figures reported again a full interval later are a's load as it stands, and it sheds.
    a.loadReportedAtMs = now + 1_000;
    b.loadReportedAtMs = now + 1_000;
    const settled = planGroup('g', group, remembered, now + 1_100, settings, 1_000);
    expect(settled.moves.length).toBeGreaterThan(0);
    expect(settled.moves.every((move) => move.from.instanceId === 'a')).toBe(true);
  });
});

describe('the balancer plan after a move, with owners that report no load', () => {
  it('weighs them by the topics their leases say, held back by no move', () => {
    const now = 10 * HOUR;
    const a = owner('a', 0);
    const b = owner('b', 0);
    a.load = undefined;
    b.load = undefined;
    const group: OwnerTopics[] = [
      { owner: a, topics: topics(30, 'a') },
      { owner: b, topics: topics(10, 'b') },
    ];
    const remembered = memory();
    remembered.ownerMovedAtMs.set('g\na', now);
    remembered.ownerMovedAtMs.set('g\nb', now);
    planGroup('g', group, remembered, now + 1, settings, 1_000);
    const { moves } = planGroup('g', group, remembered, now + 2, settings, 1_000);
    expect(moves.length).toBeGreaterThan(0);
    expect(moves.every((move) => move.from.instanceId === 'a')).toBe(true);
  });
});
