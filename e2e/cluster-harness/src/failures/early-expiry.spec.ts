import { eventually } from '@ledgerline/testing';
import { LocalCluster, type ServiceInstance } from '@ledgerline/cluster';
import { LatencyLoad, percentile } from '../index.js';

/*
 * Item 4 of issue 28 against real processes, with the default 10 s lease: a
 * writer owner SIGKILLed under load loses its session as soon as the metadata
 * service knows its process is gone (its WatchOwnerSession connection reset,
 * its port refusing connections), so producers resume on another owner well
 * before the lease would have lapsed; an owner that is only stopped (SIGSTOP:
 * its sockets stay open, its port still accepts) keeps its session and its
 * lease until the TTL. Nothing acknowledged is lost or stored twice either way.
 * LEDGERLINE_EARLY_EXPIRY_KILLS sets how many kills (bench/cluster-failover.ts runs more).
 */

const LEASE_TTL_MS = 10_000;
const KILLS = Number(process.env['LEDGERLINE_EARLY_EXPIRY_KILLS'] ?? 3);
const MESSAGES_PER_SECOND = 200;
const ACKS_BETWEEN_KILLS = 200;
/** Bound on any wait for the load (a TTL lapse and a takeover on a busy machine fit in it). */
const PROGRESS_TIMEOUT_MS = 60_000;
/** Whether the metadata service logged that it ended `owner`'s session early (its log names the instance). */
function expiredEarly(metadata: ServiceInstance, owner: ServiceInstance): boolean {
  return metadata.output
    .split('\n')
    .some((line) => line.includes('its session expired early') && line.includes(`"${owner.name}"`));
}

/** The metadata service's log lines about owner sessions, for a failure message. */
function sessionLines(metadata: ServiceInstance): string {
  return metadata.output
    .split('\n')
    .filter((line) => line.includes('session'))
    .slice(-20)
    .join('\n');
}

async function acksAfter(load: LatencyLoad, count: number): Promise<void> {
  const target = load.acks.length + count;
  await eventually(() => load.acks.length >= target, {
    attempts: PROGRESS_TIMEOUT_MS / 20,
    description: `${count} more acknowledgements`,
  });
}

describe('failover faster than the lease (default 10 s lease)', () => {
  let cluster: LocalCluster;
  let load: LatencyLoad | undefined;
  const stopped: ServiceInstance[] = [];

  beforeAll(async () => {
    // No LEDGERLINE_LEASE_TTL_MS: the writer owners run with the default lease.
    cluster = await LocalCluster.start({ counts: { metadata: 1, 'writer-owner': 3 } });
  }, 180_000);
  afterEach(async () => {
    for (const instance of stopped.splice(0)) {
      instance.signal('SIGCONT');
      await instance.stop('SIGKILL');
    }
    await load?.close();
    load = undefined;
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 120_000);

  it(`resumes producers before the lease TTL after SIGKILLs of the owner (${KILLS} kills)`, async () => {
    load = await LatencyLoad.start(cluster, 'early-kill', MESSAGES_PER_SECOND);
    const metadata = cluster.byRole('metadata')[0]!;
    const resumedMs: number[] = [];
    let expiredEarlyKills = 0;
    for (let kill = 0; kill < KILLS; kill++) {
      await acksAfter(load, ACKS_BETWEEN_KILLS);
      const owner = await cluster.ownerOf(load.topic);
      await owner.stop('SIGKILL');
      const killedAtMs = Date.now();
      // A replacement on a new port, as a new pod would be: two writers stay to take the topic.
      const replacement = cluster.add('writer-owner');
      const current = load;
      await eventually(() => current.firstAckSince(killedAtMs) !== undefined, {
        attempts: PROGRESS_TIMEOUT_MS / 20,
        description: `a publish acknowledged after kill ${kill + 1}`,
      });
      resumedMs.push(load.firstAckSince(killedAtMs)!.atMs - killedAtMs);
      const { lease } = await cluster.lease(load.topic);
      expect(lease?.instanceId).not.toBe(owner.name);
      // Give the metadata service's log a moment to reach this process.
      await eventually(() => expiredEarly(metadata, owner), { attempts: 50 }).catch(() => undefined);
      if (!expiredEarly(metadata, owner)) {
        await replacement;
        continue;
      }
      expiredEarlyKills++;
      // The correctness property of an early expiry: the lease was free, and producers resumed, before the TTL.
      expect(Number(lease!.acquiredAtMs) - killedAtMs).toBeLessThan(LEASE_TTL_MS);
      expect(resumedMs[kill]).toBeLessThan(LEASE_TTL_MS);
      await replacement;
    }
    await acksAfter(load, ACKS_BETWEEN_KILLS);
    await load.stop();
    expect(await load.check()).toEqual([]);
    // The early path ran; a kill whose port was not seen refusing falls back to the TTL (see docs/failover.md).
    expect({ expiredEarlyKills, log: expiredEarlyKills > 0 ? '' : sessionLines(metadata) }).toMatchObject({
      log: '',
    });
    const latencies = load.acks.map((ack) => ack.latencyMs);
    console.log(
      `early expiry: ${expiredEarlyKills} of ${KILLS} sessions ended early; ${KILLS} SIGKILLs under ${MESSAGES_PER_SECOND} msg/s, lease TTL ${LEASE_TTL_MS} ms: ` +
        `${load.acks.length} acknowledged, ${load.failures.length} sends failed; kill to first ack ` +
        `${resumedMs.join(', ')} ms; send latency across the run p50 ${percentile(latencies, 50).toFixed(1)} ms ` +
        `p99 ${percentile(latencies, 99).toFixed(1)} ms p99.9 ${percentile(latencies, 99.9).toFixed(1)} ms ` +
        `max ${Math.max(...latencies).toFixed(1)} ms`,
    );
  }, 600_000);

  it('keeps the lease of an owner that is only stopped (SIGSTOP) until its TTL', async () => {
    load = await LatencyLoad.start(cluster, 'early-stop', MESSAGES_PER_SECOND);
    const metadata = cluster.byRole('metadata')[0]!;
    await acksAfter(load, ACKS_BETWEEN_KILLS);
    const { topic } = load;
    const owner = await cluster.ownerOf(topic);
    stopped.push(owner);
    owner.signal('SIGSTOP');
    const stoppedAtMs = Date.now();
    // Half a TTL after the stop the lease is still the stopped owner's: nothing proved its process gone.
    await new Promise((resolve) => setTimeout(resolve, LEASE_TTL_MS / 2));
    expect((await cluster.lease(load.topic)).lease?.instanceId).toBe(owner.name);
    // Then the TTL runs out: the stopped owner's lease is dead (free, or taken by another owner).
    await eventually(async () => (await cluster.lease(topic)).lease?.instanceId !== owner.name, {
      attempts: (2 * LEASE_TTL_MS) / 50,
      intervalMs: 50,
      description: 'the lease lapsing at the TTL',
    });
    const lapsedAfterMs = Date.now() - stoppedAtMs;
    expect(expiredEarly(metadata, owner)).toBe(false);
    // Resumed past its TTL, the owner finds its session gone and lets the topic go; the load moves on.
    owner.signal('SIGCONT');
    await acksAfter(load, ACKS_BETWEEN_KILLS);
    await load.stop();
    expect(await load.check()).toEqual([]);
    const latencies = load.acks.map((ack) => ack.latencyMs);
    console.log(
      `stopped owner: lease lapsed ${lapsedAfterMs} ms after SIGSTOP (TTL ${LEASE_TTL_MS} ms, last keep-alive ` +
        `at most a third of it before); ${load.acks.length} acknowledged; send latency p99 ` +
        `${percentile(latencies, 99).toFixed(1)} ms max ${Math.max(...latencies).toFixed(1)} ms`,
    );
  }, 300_000);
});
