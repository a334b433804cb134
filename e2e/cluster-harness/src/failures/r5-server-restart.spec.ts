import { eventually } from '@ledgerline/testing';
import { checkHealth, metricSum, scrapeMetrics, LocalCluster } from '@ledgerline/cluster';
import { Workload } from '../index.js';

/*
 * R5: redis-server (append-only file fsynced per write) and nats-server are
 * killed and restarted on the same port while the load runs. Every service
 * must recover on its own (same process, serving again), and nothing
 * acknowledged may be lost. The figure is the time from the server being
 * back to the first publish acknowledged after it.
 */

const PROGRESS_TIMEOUT_MS = 60_000;
const ACKS_BETWEEN_FAULTS = 150;

describe('R5: Redis and NATS restarted under load', () => {
  let cluster: LocalCluster;
  let workload: Workload | undefined;

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      counts: { metadata: 1, 'writer-owner': 1, 'garbage-collector': 1 },
      redisAppendOnly: true,
    });
  }, 180_000);
  afterAll(async () => {
    await workload?.close();
    await cluster?.stop();
  }, 120_000);

  it('recovers every service without restarting it and loses nothing acknowledged', async () => {
    workload = await Workload.start(cluster, 'r5');
    const load = workload;
    const pids = cluster.instances.map((instance) => instance.pid);
    const recoveryMs: Record<string, number> = {};
    const writer = cluster.byRole('writer-owner')[0]!;
    const publishFailures = async () =>
      metricSum(
        (await scrapeMetrics(`127.0.0.1:${writer.metricsPort}`)) ?? '',
        'ledgerline_writer_publish_failures_total',
      );
    for (const server of [cluster.redis!, cluster.nats!]) {
      expect(await load.waitForAcks(ACKS_BETWEEN_FAULTS, PROGRESS_TIMEOUT_MS)).toBe(true);
      const failuresBefore = await publishFailures();
      await server.kill();
      // Redis stays down until the writer owner has refused a publish for it (the outage was seen);
      // NATS carries only hints, so publishes go on without it and it comes back at once.
      if (server === cluster.redis)
        await eventually(async () => (await publishFailures()) > failuresBefore, {
          attempts: PROGRESS_TIMEOUT_MS / 20,
          description: 'the writer owner refusing a publish while Redis is down',
        });
      await server.restart();
      const backAtMs = Date.now();
      await eventually(() => load.firstAckSince(backAtMs) !== undefined, {
        attempts: PROGRESS_TIMEOUT_MS / 20,
        description: `a publish acknowledged after ${server.name} came back`,
      });
      recoveryMs[server.name] = load.firstAckSince(backAtMs)!.atMs - backAtMs;
    }
    expect(await load.waitForAcks(ACKS_BETWEEN_FAULTS, PROGRESS_TIMEOUT_MS)).toBe(true);
    await load.stopProducing();
    expect(await load.check()).toEqual([]);
    await eventually(() => load.unconsumed() === 0, {
      attempts: 1_500,
      description: 'the consumer received every acknowledged message',
    });
    // The same processes, each serving again.
    expect(cluster.instances.map((instance) => instance.pid)).toEqual(pids);
    // Each serving again, by name: a metadata instance's store check (every 1 s, NOT_SERVING after two slow
    // tries in a row) may be between a slow try and the good one that follows, so its answer is awaited.
    const health = async () =>
      Object.fromEntries(
        await Promise.all(
          cluster.instances.map(async (instance) => [instance.name, await checkHealth(instance.address)]),
        ),
      );
    const serving = Object.fromEntries(cluster.instances.map((instance) => [instance.name, 'SERVING']));
    let seen = await health();
    // Bounded by the progress deadline, not by a count of tries: a loaded machine stretches each check.
    const deadline = Date.now() + PROGRESS_TIMEOUT_MS;
    while (JSON.stringify(seen) !== JSON.stringify(serving) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      seen = await health();
    }
    expect(seen).toEqual(serving);
    console.log(
      `R5: ${load.acks.length} acknowledged, ${load.failures.length} sends failed; first ack after the restart: ` +
        `redis ${recoveryMs['redis']} ms, nats ${recoveryMs['nats']} ms`,
    );
  }, 300_000);
});
