// A writer owner holding many busy topics stopped with SIGTERM (issue 43's
// target: an owner with 100 busy topics drained within 2 s from SIGTERM to
// exit, send p99.99 at most 500 ms). Per row, a local cluster (1 metadata
// instance with the balancer off, 1 writer owner, each its own process, on
// Redis and NATS) takes N topics, each sent to by its own SDK producer at
// --rate msg/s (batching off); two more writer owners start, and after a quiet
// window the first is stopped with SIGTERM: it moves its topics to the other
// two (drainTransferConcurrency at once) and exits. Prints the time from the
// signal to the exit, each window's send latency, and the topics checked
// against the acks (nothing lost, nothing stored twice).
//
// Run: npx tsx bench/drain-many-topics.ts [--topics 1,20,100] [--rate 5] [--seconds 5]
import { LocalCluster } from '@ledgerline/cluster';
import { TopicsLoad } from '@ledgerline/cluster-harness';
import { loadavg } from 'node:os';
import { flag, runAlone, sized, type BenchReport } from './bench-report.js';
import { latencies, latencyRow } from './latency-rows.js';
import { cpuNanos } from './process-cpu.js';

const TOPIC_COUNTS = (
  process.argv.includes('--topics') ? process.argv[process.argv.indexOf('--topics') + 1]! : '1,20,100'
)
  .split(',')
  .map(Number);
const RATE = flag('rate', 5);
const QUIET_MS = flag('seconds', sized({ quick: 5, normal: 5, full: 20 })) * 1000;
const TARGET_DRAIN_MS = 2_000;
const TARGET_P9999_MS = 500;
/** Sends after the exit still counted in the drain's window: those the hand-over held. */
const AFTER_EXIT_MS = 2_000;
/** Acknowledgements per topic before the quiet window starts: producers connected, topics loaded, processes warm. */
const WARM_UP_ACKS_PER_TOPIC = 5;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The lines an owner logged with `message`, as far as its kept output reaches. */
function logged<T>(output: string, message: string): T[] {
  const found: T[] = [];
  for (const line of output.split('\n')) {
    if (!line.includes(message)) continue;
    try {
      found.push(JSON.parse(line) as T);
    } catch {
      // A line cut at the start of the kept output.
    }
  }
  return found;
}

/** Calls the metadata service answered so far (every method), from its /metrics. */
async function metadataCalls(cluster: LocalCluster): Promise<number> {
  const port = cluster.byRole('metadata')[0]!.metricsPort;
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('ledgerline_grpc_server_handled_total{')) total += Number(line.split(' ').at(-1));
  }
  return total;
}

/** CPU nanoseconds so far of the metadata instance and of the owners that take the topics. */
function receiversCpuNanos(cluster: LocalCluster, victim: { pid: number | undefined }) {
  const metadata = cpuNanos(cluster.byRole('metadata')[0]!.pid);
  const targets = cluster
    .byRole('writer-owner')
    .filter((each) => each.pid !== victim.pid)
    .reduce((sum, each) => sum + cpuNanos(each.pid), 0);
  return { metadata, targets };
}

/** The pauses the stopping owner logged per topic. */
const transferPauses = (output: string) =>
  logged<{ pausedMs: number; stopMs: number; leaseMs: number; loadMs: number }>(output, 'topic transferred');

/** Where the targets' loads went (topic-registry's 'topic loaded' phases). */
const loadPhases = (outputs: string[]) =>
  outputs.flatMap((output) => logged<{ openMs: number; totalMs: number }>(output, 'topic loaded'));

const median = (values: number[]) =>
  values.length === 0 ? 0 : [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function drainRow(topicCount: number) {
  const cluster = await LocalCluster.start({
    counts: { metadata: 1, 'writer-owner': 1 },
    // The stopping owner logs each topic's pause and its phases at info.
    logLevel: 'info',
    settings: {
      // Nothing but the drain moves topics: the balancer would move half of them to the owners that join.
      metadata: { LEDGERLINE_BALANCER_ENABLED: 'false' },
      'writer-owner': { LEDGERLINE_LEASE_TTL_MS: '10000' },
    },
  });
  let load: TopicsLoad | undefined;
  try {
    const victim = cluster.byRole('writer-owner')[0]!;
    load = await TopicsLoad.start(cluster, `drain${topicCount}`, topicCount, RATE);
    const started = load;
    while (!started.everyTopicAcked(WARM_UP_ACKS_PER_TOPIC)) await sleep(100);
    await cluster.add('writer-owner');
    await cluster.add('writer-owner');
    const quietFromMs = Date.now();
    await sleep(QUIET_MS);
    const loadAverage = loadavg()[0]!;
    const callsBefore = await metadataCalls(cluster);
    const cpuBefore = receiversCpuNanos(cluster, victim);
    const signalMs = Date.now();
    const stopped = performance.now();
    if (!(await victim.stop('SIGTERM', 30_000))) throw new Error(`${victim.name} did not stop within 30 s`);
    const drainMs = Math.round(performance.now() - stopped);
    const cpuAfter = receiversCpuNanos(cluster, victim);
    const callsPerTopic = ((await metadataCalls(cluster)) - callsBefore) / topicCount;
    const cpuMsPerTopic = (from: number, to: number) => Number(((to - from) / 1e6 / topicCount).toFixed(1));
    await sleep(AFTER_EXIT_MS);
    const endMs = Date.now();
    await started.stop();
    const problems = await started.check();
    const pauses = transferPauses(victim.output);
    const loads = loadPhases(
      cluster
        .byRole('writer-owner')
        .filter((each) => each !== victim)
        .map((each) => each.output),
    );
    const draining = latencies(started, signalMs, endMs);
    const p9999 = latencyRow('', draining)['p99.99 ms'];
    return {
      quiet: latencyRow(`${topicCount} topics, no drain`, latencies(started, quietFromMs, signalMs)),
      drain: latencyRow(`${topicCount} topics, drain`, draining, {
        'SIGTERM→exit ms': drainMs,
        'pause p50 ms': median(pauses.map((each) => each.pausedMs)),
        'stop p50 ms': median(pauses.map((each) => each.stopMs)),
        'lease p50 ms': median(pauses.map((each) => each.leaseMs)),
        'load p50 ms': median(pauses.map((each) => each.loadMs)),
        'open p50 ms': median(loads.map((each) => each.openMs)),
        'target load p50 ms': median(loads.map((each) => each.totalMs)),
        'metadata calls / topic': Number(callsPerTopic.toFixed(1)),
        'metadata CPU ms / topic': cpuMsPerTopic(cpuBefore.metadata, cpuAfter.metadata),
        'targets CPU ms / topic': cpuMsPerTopic(cpuBefore.targets, cpuAfter.targets),
        'load avg': Number(loadAverage.toFixed(2)),
      }),
      verdict: {
        topics: topicCount,
        'SIGTERM→exit ms': drainMs,
        'p99.99 ms': p9999,
        target: `<= ${TARGET_DRAIN_MS} ms, p99.99 <= ${TARGET_P9999_MS} ms`,
        verdict:
          drainMs <= TARGET_DRAIN_MS &&
          p9999 <= TARGET_P9999_MS &&
          started.failures.length === 0 &&
          problems.length === 0
            ? 'met'
            : 'missed',
        'sends failed': started.failures.length,
        'lost, duplicated or misplaced': problems.length,
      },
    };
  } finally {
    await load?.close().catch(() => undefined);
    await cluster.stop();
  }
}

export async function run(): Promise<BenchReport> {
  const rows = [];
  for (const topicCount of TOPIC_COUNTS) rows.push(await drainRow(topicCount));
  return {
    section: 'Drain of a writer owner holding many busy topics (SIGTERM)',
    setup:
      `per row, 1 metadata instance (balancer off) and 1 writer owner (each its own process, Redis and NATS) holding ` +
      `N topics, each with its own SDK producer at ${RATE} msg/s (batching off); 2 more writer owners start, and ` +
      `after a ${QUIET_MS / 1000} s quiet window the first gets SIGTERM and drains to them; the drain's window runs ` +
      `from the signal to ${AFTER_EXIT_MS / 1000} s after the exit; pause and its phases: the medians of what the ` +
      `stopping owner logged per topic (stop: entries in flight, deduplication snapshot, ledger close; lease: the ` +
      `compare-and-set; load: the target's LoadTopic); metadata calls and CPU per topic: what the metadata ` +
      `instance answered and spent, and the receiving owners' CPU, from SIGTERM to exit, over the topics moved; ` +
      `target: SIGTERM→exit at most ${TARGET_DRAIN_MS} ms with ` +
      `100 topics, send p99.99 at most ${TARGET_P9999_MS} ms`,
    tables: [
      { title: 'send latency', rows: rows.flatMap((row) => [row.quiet, row.drain]) },
      { title: 'verdict', rows: rows.map((row) => row.verdict) },
    ],
    comparisons: [],
  };
}

runAlone(module, run);
