import { eventually } from '@ledgerline/testing';
import { LocalCluster } from '@ledgerline/cluster';
import { Workload, percentile } from '../index.js';

/*
 * R1: a producer with deduplication and an acknowledging consumer while the
 * writer owner of their topic is killed with SIGKILL again and again. Nothing
 * acknowledged may be lost or stored twice and offsets stay contiguous. The
 * figures are the time from the kill to the first publish acknowledged after
 * it (lease expiry included), and the takeover: from the new owner acquiring
 * the lapsed lease to the first publish it acknowledged.
 * CI kills 10 times; LEDGERLINE_SOAK_KILLS=50 (bench/cluster-failover.ts) is the soak.
 */

const KILLS = Number(process.env['LEDGERLINE_SOAK_KILLS'] ?? 10);
const LEASE_TTL_MS = 2_000;
/** Acknowledgements between two kills, so each owner serves a while. */
const ACKS_BETWEEN_KILLS = 100;
/** Bound on the load making progress after a kill (a lease lapse plus a takeover, on a busy machine). */
const PROGRESS_TIMEOUT_MS = 60_000;

describe('R1: the writer owner killed under load', () => {
  let cluster: LocalCluster;
  let workload: Workload | undefined;

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      counts: { metadata: 1, 'writer-owner': 2 },
      settings: {
        metadata: { LEDGERLINE_OWNER_SWEEP_INTERVAL_MS: '250' },
        'writer-owner': { LEDGERLINE_LEASE_TTL_MS: String(LEASE_TTL_MS) },
      },
    });
  }, 180_000);
  afterAll(async () => {
    await workload?.close();
    await cluster?.stop();
  }, 120_000);

  it(`loses and duplicates nothing acknowledged over ${KILLS} kills of the owner`, async () => {
    workload = await Workload.start(cluster, 'r1');
    const load = workload;
    const killToAckMs: number[] = [];
    const takeoverMs: number[] = [];
    for (let kill = 0; kill < KILLS; kill++) {
      expect(await load.waitForAcks(ACKS_BETWEEN_KILLS, PROGRESS_TIMEOUT_MS)).toBe(true);
      const owner = await cluster.ownerOf(load.topic);
      await owner.stop('SIGKILL');
      const killedAtMs = Date.now();
      // A replacement keeps two writers, so the topic always has somewhere to go.
      const replacement = cluster.add('writer-owner');
      await eventually(() => load.firstAckSince(killedAtMs) !== undefined, {
        attempts: PROGRESS_TIMEOUT_MS / 20,
        description: `a publish acknowledged after kill ${kill + 1}`,
      });
      const firstAckMs = load.firstAckSince(killedAtMs)!.atMs;
      killToAckMs.push(firstAckMs - killedAtMs);
      // The new lease is acquired once the old one expired (the dead owner's last keep-alive plus the TTL).
      const { lease } = await cluster.lease(load.topic);
      expect(lease?.instanceId).not.toBe(owner.name);
      takeoverMs.push(firstAckMs - Number(lease!.acquiredAtMs));
      await replacement;
    }
    await load.stopProducing();
    expect(await load.check()).toEqual([]);
    await eventually(() => load.unconsumed() === 0, {
      attempts: 1_500,
      description: 'the consumer received every acknowledged message',
    });
    console.log(
      `R1: ${KILLS} kills, ${load.acks.length} acknowledged, ${load.failures.length} sends failed; ` +
        `kill to first ack p50 ${percentile(killToAckMs, 50)} ms p99 ${percentile(killToAckMs, 99)} ms; ` +
        `new lease to first ack p50 ${percentile(takeoverMs, 50)} ms p99 ${percentile(takeoverMs, 99)} ms ` +
        `(lease TTL ${LEASE_TTL_MS} ms)`,
    );
  }, 600_000);
});
