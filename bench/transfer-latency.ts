// What a transfer adds to the publish latency of the topic it moves (issue
// 28's target: at most 100 ms on the p99.99). A local cluster (1 metadata
// instance, 2 writer owners, each its own process, on Redis and NATS) and one
// producer sending one message at a time at a steady rate: first a window
// without transfers, then a window of the same length in which the topic is
// moved from one writer owner to the other every --every-ms. Prints each
// window's send latency percentiles, the difference of their p99.99, and the
// pauses the owners reported per transfer. Every process shares the
// machine's cores: compare the two windows of one run.
//
// Run: npx tsx bench/transfer-latency.ts [--seconds 30] [--rate 500] [--every-ms 1500]
import { LocalCluster } from '@ledgerline/cluster';
import { ClusterClients, LatencyLoad, percentile } from '@ledgerline/cluster-harness';
import { flag, runAlone, sized, type BenchReport } from './bench-report.js';
import { latencies, latencyRow as row } from './latency-rows.js';

const WINDOW_MS = flag('seconds', sized({ quick: 10, normal: 30, full: 120 })) * 1000;
const RATE = flag('rate', 500);
const EVERY_MS = flag('every-ms', 1_500);
const TARGET_ADDED_MS = 100;
/** Sends before the first window: connections made, the topic loaded, the processes warm. */
const WARM_UP_ACKS = 1_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function run(): Promise<BenchReport> {
  const cluster = await LocalCluster.start({
    counts: { metadata: 1, 'writer-owner': 2 },
    settings: { 'writer-owner': { LEDGERLINE_LEASE_TTL_MS: '10000' } },
  });
  const clients = new ClusterClients(cluster);
  let load: LatencyLoad | undefined;
  try {
    load = await LatencyLoad.start(cluster, 'xfer', RATE);
    const started = load;
    while (started.acks.length < WARM_UP_ACKS) await sleep(100);
    const quietFromMs = Date.now();
    await sleep(WINDOW_MS);
    const movingFromMs = Date.now();
    const pauses: number[] = [];
    while (Date.now() - movingFromMs < WINDOW_MS) {
      const from = await cluster.ownerOf(started.topic);
      const to = cluster.byRole('writer-owner').find((instance) => instance !== from)!;
      const moved = await clients
        .controlAt(from.address)
        .transferTopic({ topic: started.topic, targetInstanceId: await clients.instanceIdAt(to.address) });
      pauses.push(Number(moved.pausedMs));
      await sleep(EVERY_MS);
    }
    const endMs = Date.now();
    await started.stop();
    const quiet = latencies(started, quietFromMs, movingFromMs);
    const moving = latencies(started, movingFromMs, endMs);
    const added = percentile(moving, 99.99) - percentile(quiet, 99.99);
    return {
      section: 'Transfers: what moving a topic adds to its publish latency',
      setup:
        `1 metadata instance and 2 writer owners (each its own process, Redis and NATS); one SDK producer, ` +
        `batching off, ${RATE} msg/s; a ${WINDOW_MS / 1000} s window without transfers, then one of the same length ` +
        `with the topic moved between the two owners every ${EVERY_MS} ms; target: the p99.99 at most ` +
        `${TARGET_ADDED_MS} ms above the quiet window's`,
      tables: [
        {
          title: 'send latency',
          rows: [
            row('no transfers', quiet),
            row(`${pauses.length} transfers`, moving, {
              'pause p50 ms': percentile(pauses, 50),
              'pause max ms': Math.max(...pauses),
            }),
          ],
        },
        {
          title: 'added by the transfers',
          rows: [
            {
              'p99.99 added ms': Number(added.toFixed(1)),
              target: `<= ${TARGET_ADDED_MS} ms`,
              verdict: added <= TARGET_ADDED_MS ? 'met' : 'missed',
              'sends failed': started.failures.length,
            },
          ],
        },
      ],
      comparisons: [],
    };
  } finally {
    await load?.close().catch(() => undefined);
    clients.close();
    await cluster.stop();
  }
}

runAlone(module, run);
