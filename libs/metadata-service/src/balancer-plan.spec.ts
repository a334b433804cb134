import { planGroup, type BalancerMemory, type OwnerTopics } from './balancer-plan.js';
import { resolveBalancerSettings } from './config.js';
import type { OwnerRecord } from './records.js';

const settings = resolveBalancerSettings({ balancerWindowRounds: 2, balancerMaxMovesPerRound: 1_000 });
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
    load: {
      topicsOwned: 0,
      messagesInPerSecond: messagesPerSecond,
      bytesInPerSecond: 0,
      messagesOutPerSecond: 0,
      bytesOutPerSecond: 0,
      consumers: 0,
      pendingEntries: 0,
      cpuShare: 0,
      intervalMs: 1_000,
    },
  };
}

const topics = (count: number, prefix = 't') =>
  Array.from({ length: count }, (_, i) => `persistent://a/b/${prefix}${i}`);
const memory = (): BalancerMemory => ({ streaks: new Map(), movedAtMs: new Map() });

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
});
