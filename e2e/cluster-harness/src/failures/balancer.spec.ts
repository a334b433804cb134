import { createClient, type LedgerlineClient } from '@ledgerline/client';
import { eventually } from '@ledgerline/testing';
import type { GetBalancerStatusResponse } from '@ledgerline/proto';
import { LocalCluster } from '@ledgerline/cluster';
import { ClusterClients, QUICK_BALANCER_SETTINGS, Workload } from '../index.js';

/*
 * The balancer against real processes: three writer owners hold every topic,
 * three more join, and the balancer (in the metadata service) moves topics to
 * them by transfer until every owner is within ±10% of the mean (the band),
 * while a workload publishes and consumes throughout with nothing lost. Then
 * the balancer runs further rounds (a round a second here), and none of them
 * moves a topic: no flapping, counted by moves, not timed. Both metadata
 * instances run a balancer; one leads at a time, so no move is refused for
 * another under way.
 */

const TOPICS = 120;
/** How long the group may take to settle once the new owners serve. */
const SETTLE_ATTEMPTS = 120;
/** Within ±10% of the mean: QUICK_BALANCER_SETTINGS's band, the balancer's default. */
const BAND = 0.1;
/** Rounds watched after the group settled, each of which must move nothing (past the shedding window of 2). */
const QUIET_ROUNDS = 6;

describe('the balancer: three writer owners, then six', () => {
  let cluster: LocalCluster;
  let clients: ClusterClients;
  let sdk: LedgerlineClient | undefined;

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      counts: { metadata: 2, 'writer-owner': 3 },
      settings: {
        metadata: { ...QUICK_BALANCER_SETTINGS },
        'writer-owner': { LEDGERLINE_LEASE_TTL_MS: '10000' },
      },
    });
    clients = new ClusterClients(cluster);
  }, 180_000);
  afterAll(async () => {
    await sdk?.close().catch(() => undefined);
    clients?.close();
    await cluster?.stop();
  }, 120_000);

  function spread(status: GetBalancerStatusResponse): { counts: number[]; mean: number; total: number } {
    const counts = status.owners.map((owner) => owner.topics);
    const total = counts.reduce((sum, count) => sum + count, 0);
    return { counts, mean: total / Math.max(1, counts.length), total };
  }

  it('moves topics to owners that join until each holds within ±10% of the mean, then moves nothing, losing nothing', async () => {
    await clients.createRetainedNamespace('bal/ns');
    const names = Array.from({ length: TOPICS }, (_, i) => `persistent://bal/ns/t${i}`);
    await clients.admin.createTopics({ topics: names });
    sdk = createClient({ serviceUrl: cluster.metadataTarget, maxReconnectAttempts: 200 });
    // Asking a topic's owner for its stats loads it there (and leases it).
    for (const topic of names) await sdk.topicStats(topic);
    const workload = await Workload.start(cluster, 'balanced');
    try {
      await eventually(async () => spread(await clients.admin.getBalancerStatus({})).total === TOPICS + 1, {
        attempts: 60,
        intervalMs: 500,
        description: 'the balancer seeing every topic leased',
      });
      const before = spread(await clients.admin.getBalancerStatus({}));
      const startedMs = Date.now();
      for (let added = 0; added < 3; added++) await cluster.add('writer-owner');
      let status: GetBalancerStatusResponse | undefined;
      await eventually(
        async () => {
          status = await clients.admin.getBalancerStatus({});
          const { counts, mean, total } = spread(status);
          return (
            counts.length === 6 &&
            total === TOPICS + 1 &&
            counts.every((count) => Math.abs(count - mean) <= BAND * mean)
          );
        },
        { attempts: SETTLE_ATTEMPTS, intervalMs: 500, description: 'every owner within ±10% of the mean' },
      ).catch((error: unknown) => {
        throw new Error(
          `${String(error)}: last status ${JSON.stringify(status, (_, v: unknown) => (typeof v === 'bigint' ? Number(v) : v))}`,
        );
      });
      const settledMs = Date.now() - startedMs;
      // No flapping: the rounds after the group settled move nothing, and keep it within the band.
      const settled = status!;
      let later: GetBalancerStatusResponse = settled;
      await eventually(
        async () => {
          later = await clients.admin.getBalancerStatus({});
          return Number(later.rounds) >= Number(settled.rounds) + QUIET_ROUNDS;
        },
        { attempts: 120, intervalMs: 500, description: `${QUIET_ROUNDS} more balancer rounds` },
      );
      expect(Number(later.movesTotal)).toBe(Number(settled.movesTotal));
      const { counts: laterCounts, mean: laterMean } = spread(later);
      expect(laterCounts.every((count) => Math.abs(count - laterMean) <= BAND * laterMean)).toBe(true);
      expect(await workload.waitForAcks(100, 60_000)).toBe(true);
      await workload.stopProducing();
      expect(workload.failures).toEqual([]);
      expect(await workload.check()).toEqual([]);
      const after = spread(status!);
      const moved = status!.recentMoves.filter((move) => move.outcome === 'moved');
      expect(status!.recentMoves.filter((move) => move.outcome !== 'moved')).toEqual([]);
      console.log(
        `balancer: ${TOPICS + 1} topics on 3 writers ${JSON.stringify(before.counts)} -> 6 writers ` +
          `${JSON.stringify(after.counts)} (mean ${after.mean.toFixed(1)}) in ${settledMs} ms after the first join ` +
          `(${Number(status!.movesTotal)} moves, last reasons: ${[...new Set(moved.map((m) => m.reason.split(':')[0]))].join(', ')}); ` +
          `${QUIET_ROUNDS} rounds after it moved nothing; ${workload.acks.length} acknowledged meanwhile, 0 failed, 0 lost, 0 duplicated`,
      );
    } finally {
      await workload.close();
    }
  }, 300_000);
});
