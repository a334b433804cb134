// Failover faster than the lease (issue 28, item 4): a local cluster (1
// metadata instance, 3 writer owners, each its own process, on Redis and NATS)
// with the default 10 s lease; a producer with deduplication at a steady rate
// while the topic's writer owner is SIGKILLed and replaced on a new port, as
// a new pod would be. Prints, over every kill, the time from the kill to the
// first acknowledged publish and the send latency (p50 / p99 / p99.9 / max)
// across the whole run, with lost / duplicated counts. The target:
// send p99 across the crash <= 1 s. Every process shares the machine's cores.
//
// Run: npx tsx bench/owner-crash-failover.ts [--full]
import { LocalCluster } from '@ledgerline/cluster';
import { LatencyLoad, percentile } from '@ledgerline/cluster-harness';
import { runAlone, sized, type BenchReport } from './bench-report.js';

const KILLS = sized({ quick: 3, normal: 5, full: 20 });
const MESSAGES_PER_SECOND = 200;
const ACKS_BETWEEN_KILLS = 300;
const LEASE_TTL_MS = 10_000;
const PROGRESS_TIMEOUT_MS = 60_000;

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + PROGRESS_TIMEOUT_MS;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${PROGRESS_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function killRepeatedly(cluster: LocalCluster, load: LatencyLoad): Promise<number[]> {
  const killToAckMs: number[] = [];
  for (let kill = 0; kill < KILLS; kill++) {
    const target = load.acks.length + ACKS_BETWEEN_KILLS;
    await waitFor(() => load.acks.length >= target, 'acknowledgements between kills');
    const owner = await cluster.ownerOf(load.topic);
    await owner.stop('SIGKILL');
    const killedAtMs = Date.now();
    const replacement = cluster.add('writer-owner');
    await waitFor(() => load.firstAckSince(killedAtMs) !== undefined, `a publish acknowledged after kill ${kill + 1}`);
    killToAckMs.push(load.firstAckSince(killedAtMs)!.atMs - killedAtMs);
    await replacement;
    process.stderr.write(`kill ${kill + 1}/${KILLS}: ${killToAckMs.at(-1)} ms to the first ack\n`);
  }
  const target = load.acks.length + ACKS_BETWEEN_KILLS;
  await waitFor(() => load.acks.length >= target, 'acknowledgements after the last kill');
  return killToAckMs;
}

export async function run(): Promise<BenchReport> {
  const cluster = await LocalCluster.start({ counts: { metadata: 1, 'writer-owner': 3 } });
  let load: LatencyLoad | undefined;
  try {
    load = await LatencyLoad.start(cluster, 'crash-bench', MESSAGES_PER_SECOND);
    const killToAckMs = await killRepeatedly(cluster, load);
    await load.stop();
    const problems = await load.check();
    const latencies = load.acks.map((ack) => ack.latencyMs);
    const ms = (value: number): number => Math.round(value);
    return {
      section: 'Writer owner SIGKILL under load, default 10 s lease (early session expiry)',
      setup:
        `1 metadata instance and 3 writer owners (each its own process, Redis and NATS), lease TTL ${LEASE_TTL_MS} ms ` +
        `(the default); one producer with deduplication at ${MESSAGES_PER_SECOND} msg/s (batching off, at most 64 in ` +
        `flight); the topic's owner SIGKILLed ${KILLS} times, each replaced on a new port; target: send p99 across ` +
        `the crashes <= 1 000 ms (docs/failover.md)`,
      tables: [
        {
          title: 'failover after SIGKILL',
          rows: [
            {
              kills: KILLS,
              acknowledged: load.acks.length,
              'sends failed': load.failures.length,
              'lost or duplicated': problems.length,
              'kill→first ack p50 ms': ms(percentile(killToAckMs, 50)),
              'kill→first ack max ms': ms(Math.max(...killToAckMs)),
              'send p50 ms': ms(percentile(latencies, 50)),
              'send p99 ms': ms(percentile(latencies, 99)),
              'send p99.9 ms': ms(percentile(latencies, 99.9)),
              'send max ms': ms(Math.max(...latencies)),
            },
          ],
        },
      ],
      comparisons: [],
    };
  } finally {
    await load?.close();
    await cluster.stop();
  }
}

runAlone(module, run);
