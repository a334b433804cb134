import { Balancer, readBalancerStatus } from './balancer.js';
import type { PlannedMove } from './balancer-plan.js';
import { resolveBalancerSettings, type BalancerConfig } from '../config.js';
import { messagesInLoad, sqliteFixture, type SqliteFixture } from '../testing/spec-support.js';

/** A fresh metadata store holding tenant t and namespace t/ns for each test of the describe that calls it. */
function withNamespace(): () => SqliteFixture {
  let fixture: SqliteFixture | undefined;
  beforeEach(async () => {
    fixture = sqliteFixture({ recountSettleMs: 0 });
    await fixture.admin.createTenant('t');
    await fixture.admin.createNamespace('t/ns', {});
  });
  afterEach(async () => {
    await fixture?.close();
  });
  return () => fixture!;
}

describe('the balancer in the metadata service', () => {
  const fixture = withNamespace();

  it('runs one at a time, sees every live lease, and records what it decided and why', async () => {
    const { admin, clock } = fixture();
    const owners = await Promise.all(
      ['a', 'b'].map((id) =>
        admin.registerOwner(
          { instanceId: id, group: 'default', role: 'writer', advertisedAddress: '127.0.0.1:1' },
          60_000,
        ),
      ),
    );
    for (let i = 0; i < 8; i++) {
      const topic = `persistent://t/ns/x y${i}`;
      await admin.createTopic(topic);
      await admin.acquireLease(topic, owners[0]!.sessionId);
    }
    const settings = { balancerWindowRounds: 1, balancerJoinWindowMs: 0, balancerIntervalMs: 1_000 };
    const first = new Balancer(admin.context, settings);
    const second = new Balancer(admin.context, settings);
    await first.round();
    await second.round();
    const status = await readBalancerStatus(admin.context);
    expect(status).toMatchObject({ leaderId: first.holderId, rounds: 1 });
    expect(status!.owners.map((owner) => [owner.instanceId, owner.topics])).toEqual([
      ['a', 8],
      ['b', 0],
    ]);
    expect(status!.decisions[0]).toContain('shedding');
    // The owners' address serves nothing: every move is recorded as failed, with the topic left where it was.
    expect(status!.recentMoves.length).toBeGreaterThan(0);
    expect(status!.recentMoves.every((move) => move.outcome.startsWith('failed') && move.fromInstanceId === 'a')).toBe(
      true,
    );
    expect(status!.recentMoves[0]!.topic).toMatch(/^persistent:\/\/t\/ns\/x y\d$/);
    // The leader's lease lapses after three intervals without a round; then the other takes over.
    clock.advance(3_001);
    await second.round();
    expect(await readBalancerStatus(admin.context)).toMatchObject({ leaderId: second.holderId });
    first.stop();
    second.stop();
  }, 30_000);
});

/*
 * Load swinging between two writer owners for five minutes of the default
 * settings (ten 30 s rounds, on the fixture's clock so the test takes
 * seconds). Each owner reports its load with its keep-alives, as writer
 * owners do; moves are carried out on the leases directly (the lease
 * transfer a writer owner makes, then the target taking the lease up).
 */
describe('the balancer under load that swings between two owners', () => {
  const ROUNDS = 10;
  const HOT_MESSAGES_PER_SECOND = 6_000;
  const fixture = withNamespace();

  /** Owners a and b, registered well before the join window, holding `counts` topics each. */
  async function ownersHolding(counts: [number, number]): Promise<Array<{ sessionId: string; instanceId: string }>> {
    const { admin, clock } = fixture();
    const owners = [];
    for (const id of ['a', 'b']) {
      const registration = { instanceId: id, group: 'default', role: 'writer' as const, advertisedAddress: `${id}:1` };
      owners.push({ sessionId: (await admin.registerOwner(registration, 60_000)).sessionId, instanceId: id });
    }
    for (const [index, count] of counts.entries()) {
      for (let i = 0; i < count; i++) {
        const topic = `persistent://t/ns/${owners[index]!.instanceId}${i}`;
        await admin.createTopic(topic);
        await admin.acquireLease(topic, owners[index]!.sessionId);
      }
    }
    const settings = resolveBalancerSettings({});
    for (let waited = 0; waited <= settings.balancerJoinWindowMs; waited += settings.balancerIntervalMs) {
      clock.advance(settings.balancerIntervalMs);
      for (const owner of owners) await admin.keepAliveOwner(owner.sessionId, messagesInLoad(0));
    }
    return owners;
  }

  /**
   * Runs the rounds with the hot owner swapping every `swingRounds` rounds; returns every move, by round.
   * With `perTopic`, owners report per-topic rates, and the traffic is carried by three topics of the hot owner.
   */
  async function swing(
    counts: [number, number],
    swingRounds: number,
    settings: Partial<BalancerConfig> = {},
    perTopic = false,
  ): Promise<{ rounds: PlannedMove[][]; atMs: number[]; resolved: BalancerConfig }> {
    const { admin, clock } = fixture();
    const owners = await ownersHolding(counts);
    const holder = new Map<string, string>();
    for (const [index, count] of counts.entries())
      for (let i = 0; i < count; i++)
        holder.set(`persistent://t/ns/${owners[index]!.instanceId}${i}`, owners[index]!.instanceId);
    // Per topic, the traffic goes where its topics go: the hot owner's first three topics carry it, wherever they are.
    const loadOf = (instanceId: string, hotId: string) => {
      if (!perTopic) return messagesInLoad(instanceId === hotId ? HOT_MESSAGES_PER_SECOND : 0);
      const busy = [0, 1, 2].map((i) => `persistent://t/ns/${hotId}${i}`).filter((t) => holder.get(t) === instanceId);
      const rate = HOT_MESSAGES_PER_SECOND / 3;
      const load = messagesInLoad(rate * busy.length);
      load.busiestTopics = busy.map((topic) => ({ topic, messagesPerSecond: rate }));
      return load;
    };
    const rounds: PlannedMove[][] = [];
    const atMs: number[] = [];
    const mover = async (move: PlannedMove) => {
      holder.set(move.topic, move.to.instanceId);
      rounds.at(-1)!.push(move);
      await admin.transferLease(move.topic, move.from.sessionId, move.to.instanceId);
      await admin.acquireLease(move.topic, move.to.sessionId);
      return { pausedMs: 0 };
    };
    const balancer = new Balancer(admin.context, settings, mover);
    for (let round = 0; round < ROUNDS; round++) {
      const hot = Math.floor(round / swingRounds) % 2;
      for (const owner of owners) {
        await admin.keepAliveOwner(owner.sessionId, loadOf(owner.instanceId, owners[hot]!.instanceId));
      }
      rounds.push([]);
      atMs.push(clock.now());
      await balancer.round();
      clock.advance(balancer.settings.balancerIntervalMs);
    }
    balancer.stop();
    return { rounds, atMs, resolved: balancer.settings };
  }

  it.each([1, 2])(
    'moves nothing when the hot owner changes every %i round(s), inside the window',
    async (swingRounds) => {
      // 36 and 24 topics: within the threshold by count; each round one owner is far out of balance by traffic.
      const { rounds, resolved } = await swing([36, 24], swingRounds);
      expect(rounds).toHaveLength(ROUNDS);
      expect(ROUNDS * resolved.balancerIntervalMs).toBe(5 * 60_000);
      expect(rounds.flat()).toEqual([]);
      const status = await readBalancerStatus(fixture().admin.context);
      expect(status).toMatchObject({ rounds: ROUNDS, movesTotal: 0 });
    },
    30_000,
  );

  it.each([3, 4, 5])(
    'when the hot owner changes every %i rounds, moves stay within the bounds and never go back',
    async (swingRounds) => {
      const { rounds, atMs, resolved } = await swing([50, 30], swingRounds, { balancerMaxMovesPerRound: 2 });
      const moves = rounds.flat();
      // The swing outlasts the window: something is shed, but only as far as the bounds allow.
      expect(moves.length).toBeGreaterThan(0);
      for (const round of rounds) expect(round.length).toBeLessThanOrEqual(resolved.balancerMaxMovesPerRound);
      const movedAt = new Map<string, number[]>();
      rounds.forEach((round, index) => {
        for (const move of round) movedAt.set(move.topic, [...(movedAt.get(move.topic) ?? []), atMs[index]!]);
      });
      for (const times of movedAt.values()) {
        for (let i = 1; i < times.length; i++) {
          expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(resolved.balancerTopicCooldownMs);
        }
      }
      // No flapping: topics leave the owner that held more of them, and nothing ever comes back.
      expect(new Set(moves.map((move) => `${move.from.instanceId}->${move.to.instanceId}`))).toEqual(new Set(['a->b']));
      expect(new Set(moves.map((move) => move.topic)).size).toBe(moves.length);
      expect(moves.every((move) => move.kind === 'shed')).toBe(true);
    },
    30_000,
  );

  it.each([1, 2])(
    'with per-topic rates, moves nothing when the hot owner changes every %i round(s), inside the window',
    async (swingRounds) => {
      const { rounds } = await swing([36, 24], swingRounds, {}, true);
      expect(rounds.flat()).toEqual([]);
    },
    30_000,
  );

  it.each([3, 4, 5])(
    'with per-topic rates, when the hot owner changes every %i rounds, busy topics move within the bounds, each once',
    async (swingRounds) => {
      const { rounds, resolved } = await swing([50, 30], swingRounds, { balancerMaxMovesPerRound: 2 }, true);
      const moves = rounds.flat();
      expect(moves.length).toBeGreaterThan(0);
      for (const round of rounds) expect(round.length).toBeLessThanOrEqual(resolved.balancerMaxMovesPerRound);
      // The cooldown (10 minutes) outlasts the 5 minutes: a topic moved once never moves back.
      expect(resolved.balancerTopicCooldownMs).toBeGreaterThan(ROUNDS * resolved.balancerIntervalMs);
      expect(new Set(moves.map((move) => move.topic)).size).toBe(moves.length);
      // What moves is traffic, not idle topics: the busy topics the hot owner reported.
      expect(moves.every((move) => move.reason.includes('the topic carried'))).toBe(true);
    },
    30_000,
  );
});

describe('the balancer when a writer owner joins', () => {
  const fixture = withNamespace();

  it('starts a round for the owner that joined and carries its moves out a bounded number at a time, and fewer into one owner', async () => {
    const { admin, clock } = fixture();
    const register = (id: string) =>
      admin.registerOwner({ instanceId: id, group: 'default', role: 'writer', advertisedAddress: `${id}:1` }, 60_000);
    const a = await register('a');
    for (let i = 0; i < 40; i++) {
      await admin.createTopic(`persistent://t/ns/x${i}`);
      await admin.acquireLease(`persistent://t/ns/x${i}`, a.sessionId);
    }
    let inFlight = 0;
    let mostInFlight = 0;
    const intoOwner = new Map<string, number>();
    let mostIntoOneOwner = 0;
    const moved: PlannedMove[] = [];
    const mover = async (move: PlannedMove) => {
      mostInFlight = Math.max(mostInFlight, ++inFlight);
      const into = (intoOwner.get(move.to.instanceId) ?? 0) + 1;
      intoOwner.set(move.to.instanceId, into);
      mostIntoOneOwner = Math.max(mostIntoOneOwner, into);
      await new Promise((resolve) => setTimeout(resolve, 5));
      await admin.transferLease(move.topic, move.from.sessionId, move.to.instanceId);
      await admin.acquireLease(move.topic, move.to.sessionId);
      inFlight--;
      intoOwner.set(move.to.instanceId, intoOwner.get(move.to.instanceId)! - 1);
      moved.push(move);
      return { pausedMs: 0 };
    };
    const settings = { balancerTransferConcurrency: 4, balancerTransferConcurrencyPerOwner: 2 };
    const balancer = new Balancer(admin.context, settings, mover);
    // The balancer's first looks count a as joined: the second one in a row starts a round (a alone moves nothing).
    await balancer.roundIfJoined();
    expect(await readBalancerStatus(admin.context)).toBeUndefined();
    await balancer.roundIfJoined();
    expect(await readBalancerStatus(admin.context)).toMatchObject({ rounds: 1, movesTotal: 0 });
    await balancer.roundIfJoined();
    await balancer.roundIfJoined();
    expect(await readBalancerStatus(admin.context)).toMatchObject({ rounds: 1 });
    // a registered before the join window, so that b is the one that joined.
    for (let waited = 0; waited <= balancer.settings.balancerJoinWindowMs; waited += 30_000) {
      clock.advance(30_000);
      await admin.keepAliveOwner(a.sessionId);
    }
    await register('b');
    await balancer.roundIfJoined();
    expect(await readBalancerStatus(admin.context)).toMatchObject({ rounds: 1 });
    // c registers before the next look: the round waits for the set of joined owners to hold still.
    await register('c');
    await balancer.roundIfJoined();
    expect(await readBalancerStatus(admin.context)).toMatchObject({ rounds: 1 });
    await balancer.roundIfJoined();
    const status = await readBalancerStatus(admin.context);
    expect(status).toMatchObject({ rounds: 2 });
    expect(moved.length).toBeGreaterThan(5);
    expect(moved.every((move) => move.kind === 'join' && ['b', 'c'].includes(move.to.instanceId))).toBe(true);
    expect(new Set(moved.map((move) => move.to.instanceId))).toEqual(new Set(['b', 'c']));
    // One round for both: every topic moved once.
    expect(new Set(moved.map((move) => move.topic)).size).toBe(moved.length);
    expect(Number(status!.movesTotal)).toBe(moved.length);
    // Both bounds held, and both were reached: 2 into each of the two owners that joined, 4 in all.
    expect(mostInFlight).toBeGreaterThan(2);
    expect(mostInFlight).toBeLessThanOrEqual(4);
    expect(mostIntoOneOwner).toBe(2);
    balancer.stop();
  }, 30_000);
});

describe('the balancer with read-only owners (PIP-63)', () => {
  const fixture = withNamespace();

  it('gives a read-only owner that joined its share of the reader topics, apart from the writer owners', async () => {
    const { admin, clock } = fixture();
    // Readers of t/ns, served by read-only owners of group default, the writer owners' group too.
    await admin.createNamespace('t/readers', { ownerGroup: 'default', writerNamespace: 't/ns' });
    const register = (id: string, role: 'writer' | 'readonly') =>
      admin.registerOwner({ instanceId: id, group: 'default', role, advertisedAddress: `${id}:1` }, 60_000);
    const writer = await register('w1', 'writer');
    const reader = await register('r1', 'readonly');
    for (let i = 0; i < 30; i++) {
      await admin.createTopic(`persistent://t/ns/x${i}`);
      await admin.acquireLease(`persistent://t/ns/x${i}`, writer.sessionId);
      await admin.acquireLease(`persistent://t/readers/x${i}`, reader.sessionId);
    }
    const moved: PlannedMove[] = [];
    const mover = async (move: PlannedMove) => {
      await admin.transferLease(move.topic, move.from.sessionId, move.to.instanceId);
      await admin.acquireLease(move.topic, move.to.sessionId);
      moved.push(move);
      return { pausedMs: 0 };
    };
    const balancer = new Balancer(admin.context, { balancerWindowRounds: 1 }, mover);
    // w1 and r1 registered before the join window; then a second read-only owner joins.
    for (let waited = 0; waited <= balancer.settings.balancerJoinWindowMs; waited += 30_000) {
      clock.advance(30_000);
      await admin.keepAliveOwner(writer.sessionId);
      await admin.keepAliveOwner(reader.sessionId);
    }
    await register('r2', 'readonly');
    await balancer.round();
    const status = await readBalancerStatus(admin.context);
    // Reader topics move between read-only owners only; the lone writer owner's topics stay.
    expect(moved.length).toBeGreaterThan(5);
    expect(moved.every((move) => move.topic.startsWith('persistent://t/readers/'))).toBe(true);
    expect(moved.every((move) => move.from.instanceId === 'r1' && move.to.instanceId === 'r2')).toBe(true);
    // The status shows what the round saw, each role as a group of its own.
    expect(status!.owners.map((owner) => [owner.group, owner.instanceId, owner.topics]).sort()).toEqual([
      ['default (read-only)', 'r1', 30],
      ['default (read-only)', 'r2', 0],
      ['default', 'w1', 30],
    ]);
    // Placement's share: about half of the reader topics.
    expect(moved.length).toBeLessThan(25);
    balancer.stop();
  }, 30_000);
});
