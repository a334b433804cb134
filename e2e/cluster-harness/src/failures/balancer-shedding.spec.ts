import { eventually } from '@ledgerline/testing';
import type { BalancerMove } from '@ledgerline/proto';
import { createClient, LedgerlineError } from '@ledgerline/client';
import { LocalCluster, type ServiceInstance } from '@ledgerline/cluster';
import { ClusterClients, LatencyLoad, QUICK_BALANCER_SETTINGS } from '../index.js';

/*
 * Shedding by traffic against real processes: two writer owners hold five
 * topics each, but two of one owner's topics carry 300 msg/s each. With 20
 * msg/s weighing as one topic, that owner is 35 topics' worth against 5, and
 * the balancer moves one of its busy topics (not an idle one: moving idle
 * topics would leave the traffic where it is), while both producers go on
 * with nothing lost. Counting topics alone, the group looks balanced.
 *
 * The weight leaves room for a busy machine: the plan prefers an idle topic
 * only while a busy one weighs less than three topics, so the outcome holds
 * down to 40 msg/s a topic. (At 100 msg/s a topic, a run that reached half
 * the rate shed two idle topics first and was then balanced within the
 * threshold, with both busy topics still together.)
 */

const RATE = 300;
const MESSAGES_PER_TOPIC = 20;
const IDLE = 8;
/** Refusals of a transfer that mean the balancer moved the topic meanwhile. */
const MOVED_MEANWHILE = new Set(['TRANSFER_IN_PROGRESS', 'NOT_OWNER']);

describe('the balancer sheds an owner hot by traffic', () => {
  let cluster: LocalCluster;
  let clients: ClusterClients;
  const loads: LatencyLoad[] = [];

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      counts: { metadata: 1, 'writer-owner': 2 },
      settings: {
        metadata: { ...QUICK_BALANCER_SETTINGS, LEDGERLINE_BALANCER_MESSAGES_PER_TOPIC: String(MESSAGES_PER_TOPIC) },
        // Keep-alives (and so load reports) every second.
        'writer-owner': { LEDGERLINE_LEASE_TTL_MS: '3000' },
      },
    });
    clients = new ClusterClients(cluster);
  }, 180_000);
  afterAll(async () => {
    for (const load of loads) await load.close().catch(() => undefined);
    clients?.close();
    await cluster?.stop();
  }, 120_000);

  /**
   * Moves `topic` to `to` unless it is there already. The balancer runs while the topics are arranged, so a topic
   * may be moving (refused as TRANSFER_IN_PROGRESS) or have just left the owner asked (NOT_OWNER): look again.
   */
  async function place(topic: string, to: ServiceInstance): Promise<void> {
    await eventually(
      async () => {
        const from = await cluster.ownerOf(topic);
        if (from === to) return true;
        try {
          await clients
            .controlAt(from.address)
            .transferTopic({ topic, targetInstanceId: await clients.instanceIdAt(to.address) });
          return true;
        } catch (error) {
          if (error instanceof LedgerlineError && MOVED_MEANWHILE.has(error.reason)) return false;
          throw error;
        }
      },
      { attempts: 40, intervalMs: 250, description: `placing ${topic}` },
    );
  }

  it('moves one of the busy topics to the other owner, and nothing is lost', async () => {
    await clients.createRetainedNamespace('shed/ns');
    const idle = Array.from({ length: IDLE }, (_, i) => `persistent://shed/ns/i${i}`);
    await clients.admin.createTopics({ topics: idle });
    const sdk = createClient({ serviceUrl: cluster.metadataTarget });
    try {
      // Asking a topic's owner for its stats loads it there (and leases it).
      for (const topic of idle) await sdk.topicStats(topic);
    } finally {
      await sdk.close();
    }
    loads.push(await LatencyLoad.start(cluster, 'hot-a', RATE), await LatencyLoad.start(cluster, 'hot-b', RATE));
    const [hotA, hotB] = loads.map((load) => load.topic) as [string, string];
    const busy = await cluster.ownerOf(hotA);
    const other = cluster.byRole('writer-owner').find((instance) => instance !== busy)!;
    // Five topics each; both busy ones on the same owner. A busy topic the balancer moves while the rest are
    // still being placed counts too: it sheds from the moment both busy topics share an owner.
    const arrangingFromMs = Date.now();
    for (const topic of [hotB, ...idle.slice(0, 3)]) await place(topic, busy);
    for (const topic of idle.slice(3)) await place(topic, other);

    // A shed made while the topics were still being placed can be undone by placing (hotB shed from `busy` just
    // before it was placed there again), and then the balancer sheds again: wait for a shed that stands.
    let moves: BalancerMove[] = [];
    let rounds = 0n;
    const apart = async () => (await cluster.ownerOf(hotA)) !== (await cluster.ownerOf(hotB));
    await eventually(
      async () => {
        const status = await clients.admin.getBalancerStatus({});
        rounds = status.rounds;
        moves = status.recentMoves.filter((move) => Number(move.atMs) >= arrangingFromMs);
        return moves.some((move) => [hotA, hotB].includes(move.topic) && move.outcome === 'moved') && (await apart());
      },
      { attempts: 120, intervalMs: 500, description: 'the balancer moving a busy topic' },
    ).catch((error: unknown) => {
      throw new Error(
        `${String(error)}; moves since arranging: ${JSON.stringify(moves.map((m) => [m.topic, m.reason]))}`,
      );
    });
    const shed = moves.find((move) => [hotA, hotB].includes(move.topic))!;
    expect(shed.reason).toMatch(/^shed: .* the topic carried \d+\.\d msg\/s$/);
    // The busy topics stay on different owners: two more rounds move neither of them back.
    await eventually(async () => (await clients.admin.getBalancerStatus({})).rounds >= rounds + 2n, {
      attempts: 120,
      intervalMs: 250,
      description: 'two more balancer rounds',
    });
    expect(await apart()).toBe(true);
    for (const load of loads) await load.stop();
    for (const load of loads) {
      expect(load.failures).toEqual([]);
      expect(await load.check()).toEqual([]);
    }
  }, 240_000);
});
