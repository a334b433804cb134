import { findRepositoryRoot } from '@ledgerline/cluster';
import {
  DEV_DEPLOYMENTS,
  NO_VIOLATIONS,
  PodWorkload,
  downAndLeftovers,
  podSpecRun,
  modelViolations,
  stretchAcross,
  summaryFigures,
} from './testing/index.js';

/*
 * Robustness on pods (issue 30, item 2): the stores go away under load.
 * First NATS is cut off from every pod for 30 s: notifications are hints
 * (lease and ledger changes are also polled), so acknowledgements go on and
 * only latency changes. Then redis-server is SIGKILLed in its pod (append-only
 * file, fsync per write) and the kubelet restarts the container on the same
 * volume: every service reconnects on its own, no container of ours is
 * restarted, and nothing acknowledged is lost. The model check is
 * modelViolations'.
 */

const root = findRepositoryRoot(__dirname);
const NATS_CUT_MS = 30_000;

describe('the stores going away under load: NATS cut off for 30 s, Redis killed and restarted', () => {
  const pods = podSpecRun(root);

  it('keeps acknowledging without NATS, recovers every service unaided after Redis, and loses nothing', async () => {
    const run = await pods.up();
    await run.addClientPod('client');
    const workload = (pods.workload = await PodWorkload.start(run, 'client', 'outages'));
    await workload.waitForAcks(300, 60_000);
    const ours = () => DEV_DEPLOYMENTS.flatMap((name) => run.podsOf(name));
    const podsBefore = ours().map((pod) => pod.name);
    // Counted from here: a container that exits while the pods start (its dependencies not ready yet) is the
    // kubelet's ordinary restart, not a recovery from the faults below.
    const restartsBefore = new Map(ours().map((pod) => [pod.name, pod.restarts]));

    const natsCutAtMs = Date.now();
    process.stdout.write(`${new Date(natsCutAtMs).toISOString()} cutting nats-0 off\n`);
    await run.partition(
      'nats-0',
      run.status().flatMap((pod) => (pod.name === 'nats-0' ? [] : [pod.name])),
    );
    await new Promise((resolve) => setTimeout(resolve, NATS_CUT_MS));
    await run.heal();
    const natsHealedAtMs = Date.now();
    await workload.waitForAcks(workload.acked() + 300, 60_000);

    const redis = run.status().find((pod) => pod.name === 'redis-0')!;
    const redisKilledAtMs = Date.now();
    process.stdout.write(`${new Date(redisKilledAtMs).toISOString()} killing redis-0\n`);
    process.kill(redis.pids[0]!, 'SIGKILL');
    expect(await run.waitUntil(() => run.pod('redis-0').restarts > 0 && run.pod('redis-0').ready, 120_000)).toBe(true);
    const redisBackAtMs = Date.now();
    const ackedAtRedisBack = workload.acked();
    await workload.waitForAcks(ackedAtRedisBack + 300, 120_000);
    const summary = await workload.stop();
    const acks = workload.ackRecords();
    pods.workload = undefined;

    const natsDuring = acks.filter((ack) => ack.atMs >= natsCutAtMs && ack.atMs <= natsHealedAtMs).length;
    const firstAfterRedis = acks.find((ack) => ack.atMs >= redisBackAtMs)?.atMs ?? NaN;
    const restarts = ours().map((pod) => `${pod.name} ${pod.restarts - (restartsBefore.get(pod.name) ?? 0)}`);
    process.stdout.write(
      `stores away under load: faults injected 2 (nats-0 cut off from every pod for ${natsHealedAtMs - natsCutAtMs} ms; ` +
        `redis-0 SIGKILLed, back and ready after ${redisBackAtMs - redisKilledAtMs} ms), ${summaryFigures(summary)}; ` +
        `${natsDuring} acked while NATS was cut off, longest stretch across the NATS cut ` +
        `${stretchAcross(acks, natsCutAtMs, natsHealedAtMs)} ms; first ack ${firstAfterRedis - redisBackAtMs} ms after Redis ` +
        `was ready (${stretchAcross(acks, redisKilledAtMs, workload.stoppedAtMs)} ms without one across the kill); ` +
        `restarts of our containers during the faults: ${restarts.join(', ')} ` +
        `(while the pods started: ${[...restartsBefore.values()].reduce((sum, count) => sum + count, 0)})\n`,
    );
    // Notifications are hints: without NATS the load goes on.
    expect(natsDuring).toBeGreaterThan(0);
    expect(modelViolations(summary)).toEqual(NO_VIOLATIONS);
    // Unaided: the same pods, none of their containers restarted by a failing probe or an exit.
    expect(ours().map((pod) => pod.name)).toEqual(podsBefore);
    expect(restarts.filter((line) => !line.endsWith(' 0'))).toEqual([]);
    expect(await downAndLeftovers(pods)).toEqual([]);
  }, 900_000);
});
