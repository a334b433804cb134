// The R1 soak (e2e/cluster-harness/src/failures/r1-writer-owner-kill.spec.ts runs 10
// kills in CI): a producer with deduplication and an acking consumer on one
// topic of a local cluster (1 metadata instance, 2 writer owners, each its own
// process), while the topic's writer owner is killed with SIGKILL --kills times
// (50 by default) and replaced. Prints acknowledged / lost / duplicated counts
// and, per kill, the time from the kill to the first acknowledged publish and
// from the new owner's lease to it (p50/p99). Every process shares the
// machine's cores: compare rows of one run.
//
// Run: npx tsx bench/cluster-failover.ts [--kills 50] [--lease-ttl-ms 2000]
import { LocalCluster } from '@ledgerline/cluster';
import { Workload, percentile } from '@ledgerline/cluster-harness';
import { flag } from './bench-report.js';

const KILLS = flag('kills', 50);
const LEASE_TTL_MS = flag('lease-ttl-ms', 2_000);
const ACKS_BETWEEN_KILLS = 100;
const PROGRESS_TIMEOUT_MS = 60_000;

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + PROGRESS_TIMEOUT_MS;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${PROGRESS_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function main(): Promise<void> {
  const cluster = await LocalCluster.start({
    counts: { metadata: 1, 'writer-owner': 2 },
    settings: {
      metadata: { LEDGERLINE_OWNER_SWEEP_INTERVAL_MS: '250' },
      'writer-owner': { LEDGERLINE_LEASE_TTL_MS: String(LEASE_TTL_MS) },
    },
  });
  let workload: Workload | undefined;
  try {
    workload = await Workload.start(cluster, 'soak');
    const load = workload;
    const killToAckMs: number[] = [];
    const leaseToAckMs: number[] = [];
    for (let kill = 0; kill < KILLS; kill++) {
      if (!(await load.waitForAcks(ACKS_BETWEEN_KILLS, PROGRESS_TIMEOUT_MS))) throw new Error('the load stalled');
      const owner = await cluster.ownerOf(load.topic);
      await owner.stop('SIGKILL');
      const killedAtMs = Date.now();
      const replacement = cluster.add('writer-owner');
      await waitFor(
        () => load.firstAckSince(killedAtMs) !== undefined,
        `a publish acknowledged after kill ${kill + 1}`,
      );
      const firstAckMs = load.firstAckSince(killedAtMs)!.atMs;
      killToAckMs.push(firstAckMs - killedAtMs);
      const { lease } = await cluster.lease(load.topic);
      leaseToAckMs.push(firstAckMs - Number(lease!.acquiredAtMs));
      await replacement;
      process.stderr.write(`kill ${kill + 1}/${KILLS}: ${firstAckMs - killedAtMs} ms to the first ack\n`);
    }
    await load.stopProducing();
    const problems = await load.check();
    console.log(
      `| kills | acknowledged | sends failed | problems | kill→ack p50 / p99 ms | new lease→ack p50 / p99 ms | lease TTL ms |`,
    );
    console.log(`| --- | --- | --- | --- | --- | --- | --- |`);
    console.log(
      `| ${KILLS} | ${load.acks.length} | ${load.failures.length} | ${problems.length} | ` +
        `${percentile(killToAckMs, 50)} / ${percentile(killToAckMs, 99)} | ` +
        `${percentile(leaseToAckMs, 50)} / ${percentile(leaseToAckMs, 99)} | ${LEASE_TTL_MS} |`,
    );
    for (const problem of problems) console.log(`  ${problem}`);
    if (problems.length > 0) process.exitCode = 1;
  } finally {
    await workload?.close();
    await cluster.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
