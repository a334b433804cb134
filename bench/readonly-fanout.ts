// Read-only owners (PIP-63): how fast the writer's last-add-confirmed reaches a
// read-side consumer, and what read-side consumers cost the writer owner.
//
//   LAC propagation at 1K and 10K msg/s: publish (writer owner) -> delivery
//     to a consumer on a read-only owner, beside a consumer on the writer
//     itself, p50/p99 (send-stamped payloads, one clock: this process)
//   writer-owner CPU (user + system, from /proc) over the same paced run with
//     0 and with 10 read-side subscriptions consuming
//
// Processes as in a cluster: redis-server, nats-server, metadata service,
// writer owner, read-only owner; they share the machine's cores with this
// client, so compare rows of one run.
//
// Run: npx tsx bench/readonly-fanout.ts [--full]   (also part of `npm run bench`)
//   Default 3 s per row, --full 15 s; the runner's default 2 s.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as hdr from 'hdr-histogram-js';
import { AdminService, InitialPosition, SubscriptionType, TopicsService } from '@ledgerline/proto';
import { closeClient, createClient, type Client } from '@ledgerline/rpc';
import { freePort, startNats, startRedis } from '@ledgerline/testing';
import {
  newHistogram,
  publishStream,
  sentAtMicros,
  stamped as stampedCopy,
  startService,
  startWriterCluster,
  stopChildren,
  waitForOwner,
} from './baselines.js';
import { formatNumber, runAlone, sized, type BenchReport } from './bench-report.js';

const PACED_SECONDS = sized({ quick: 2, normal: 3, full: 15 });
const MESSAGE_BYTES = 256;
const READ_SIDE_CONSUMERS = 10;
const CLOCK_TICKS_PER_SECOND = 100;
const LAC_METRIC = 'ledgerline_readonly_lac_propagation_seconds';
/** The targets: writer CPU with 10 read-side consumers <= 1.1 x with none; read-side p99 <= 5 ms on loopback. */
const CPU_TARGET_RATIO = 1.1;
const READ_SIDE_P99_TARGET_MS = 5;

type Topics = Client<typeof TopicsService>;

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

const payload = new Uint8Array(MESSAGE_BYTES);
const stamped = (): Uint8Array => stampedCopy(payload);

/** A Consume stream that records each delivery's latency; stop() ends it. */
function latencyConsumer(topics: Topics, topic: string, subscription: string) {
  const histogram = newHistogram();
  const controller = new AbortController();
  let received = 0;
  let wake: (() => void) | undefined;
  let subscribed: () => void = () => undefined;
  let failed: (error: unknown) => void = () => undefined;
  let failure: unknown;
  const ready = new Promise<void>((done, fail) => {
    subscribed = done;
    failed = fail;
  });
  async function* requests() {
    yield {
      command: {
        case: 'subscribe' as const,
        value: { topic, subscription, type: SubscriptionType.EXCLUSIVE, initialPosition: InitialPosition.LATEST },
      },
    };
    let granted = 0;
    for (;;) {
      if (granted - received < 5_000) {
        granted += 10_000;
        yield { command: { case: 'flow' as const, value: { permits: 10_000 } } };
      }
      if (controller.signal.aborted) return;
      await new Promise<void>((done) => (wake = done));
    }
  }
  const running = (async () => {
    try {
      for await (const response of topics.consume(requests(), { signal: controller.signal })) {
        if (response.event.case === 'subscribed') subscribed();
        if (response.event.case !== 'entry') continue;
        const now = performance.now() * 1000;
        for (const m of response.event.value.messages)
          histogram.recordValue(Math.max(1, now - sentAtMicros(m.payload)));
        received += response.event.value.messages.length;
        wake?.();
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    }
  })();
  // A stream that fails fails `ready`, the waits that check `failure`, and stop().
  running.catch((error: unknown) => {
    failure ??= error;
    failed(error);
  });
  return {
    ready,
    histogram,
    get received() {
      if (failure !== undefined) throw failure;
      return received;
    },
    async stop() {
      controller.abort();
      wake?.();
      await running;
    },
  };
}

let producers = 0;

/** Publishes stamped messages at `rate` per second for PACED_SECONDS over one Publish stream; resolves when all are stored. */
async function pacedPublish(topics: Topics, topic: string, rate: number): Promise<number> {
  // A producer name of its own: with deduplication on, a second run's sequence ids 0.. under the
  // same name on the same topic would be taken as resends and not stored.
  const producerName = `bench-${rate}-${++producers}`;
  const total = rate * PACED_SECONDS;
  const queue: Uint8Array[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  async function* requests() {
    let sequenceId = 0n;
    for (;;) {
      const next = queue.shift();
      if (next !== undefined) {
        yield { message: { topic, payload: next, producerName, sequenceId: sequenceId++ } };
        continue;
      }
      if (done) return;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  }
  let answered = 0;
  const reading = (async () => {
    for await (const response of topics.publish(requests())) {
      if (response.result.case !== 'receipt') throw new Error(`publish failed: ${response.result.value?.reason}`);
      if (++answered === total) return;
    }
  })();
  const started = performance.now();
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) * rate) / 1000));
    while (sent < due) {
      queue.push(stamped());
      sent++;
      wake?.();
    }
    await new Promise((next) => setTimeout(next, 1));
  }
  await reading;
  done = true;
  wake?.();
  return total;
}

async function waitFor(condition: () => boolean, timeoutMs: number, what: string | (() => string)): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((next) => setTimeout(next, 5));
  }
}

const ms = (histogram: hdr.Histogram, percentile: number) => histogram.getValueAtPercentile(percentile) / 1000;

/** The read-only owner's LAC propagation histogram: cumulative count per bucket bound (seconds), from its /metrics. */
async function lacBuckets(metricsPort: number): Promise<Map<number, number>> {
  const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  const text = await response.text();
  const buckets = new Map<number, number>();
  for (const line of text.split('\n')) {
    const match = /^ledgerline_readonly_lac_propagation_seconds_bucket\{.*le="([^"]+)".*\} (\S+)$/.exec(line);
    if (match !== null) buckets.set(Number(match[1]), Number(match[2]));
  }
  return buckets;
}

/**
 * The p-th percentile of the notifications counted between two scrapes, as
 * the bound of the bucket it falls in (ms); undefined when none came.
 */
function bucketPercentileMs(before: Map<number, number>, after: Map<number, number>, percentile: number) {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((bound) => (after.get(bound) ?? 0) - (before.get(bound) ?? 0));
  const total = counts.at(-1) ?? 0;
  if (total === 0) return { count: 0, ms: undefined };
  const index = counts.findIndex((count) => count >= (total * percentile) / 100);
  const bound = bounds[index]!;
  return { count: total, ms: Number.isFinite(bound) ? bound * 1000 : Number.POSITIVE_INFINITY };
}

/** Publishes and consumes a little on both owners so topic loads, connections and JIT are out of the measured rows. */
async function warmUp(onWriter: Topics, onReader: Topics, topic: string): Promise<void> {
  const readSide = latencyConsumer(onReader, topic, 'warm-up-read');
  const writerSide = latencyConsumer(onWriter, topic, 'warm-up-write');
  await Promise.all([readSide.ready, writerSide.ready]);
  const total = await pacedPublish(onWriter, topic, 1_000);
  await waitFor(() => readSide.received >= total && writerSide.received >= total, 60_000, 'the warm-up messages');
  await Promise.all([readSide.stop(), writerSide.stop()]);
}

/** Starts Redis, NATS, a metadata service, a writer owner and a read-only owner (each its own process), and measures every row. */
export async function run(): Promise<BenchReport> {
  const redis = await startRedis();
  const nats = await startNats();
  const children: ChildProcess[] = [];
  const clients: Client<typeof AdminService | typeof TopicsService>[] = [];
  try {
    const cluster = await startWriterCluster(redis.url, nats.url);
    children.push(...cluster.children);
    const readOnlyPort = await freePort();
    const readOnlyMetricsPort = await freePort();
    children.push(
      await startService('readonly-owner', readOnlyPort, {
        LEDGERLINE_REDIS_URL: redis.url,
        LEDGERLINE_NATS_URL: nats.url,
        LEDGERLINE_METRICS_PORT: String(readOnlyMetricsPort),
        LEDGERLINE_METADATA_ADDRESS: cluster.metadataAddress,
        LEDGERLINE_REDIS_KEY_PREFIX: 'bench-ledgers',
        LEDGERLINE_ADVERTISED_ADDRESS: `127.0.0.1:${readOnlyPort}`,
        LEDGERLINE_OWNER_GROUP: 'readers',
      }),
    );
    const admin = createClient(AdminService, cluster.metadataAddress);
    const onWriter = createClient(TopicsService, cluster.writerAddress);
    const onReader = createClient(TopicsService, `127.0.0.1:${readOnlyPort}`);
    clients.push(admin, onWriter, onReader);
    await admin.createTenant({ tenant: 'bench' });
    await admin.createNamespace({ namespace: 'bench/writer', policies: { retentionTimeMinutes: 60n } });
    await admin.createNamespace({ namespace: 'bench/reader', policies: { ownerGroup: 'readers' } });
    await admin.setWriterNamespace({ namespace: 'bench/reader', writerNamespace: 'bench/writer' });
    const CPU_ROUNDS = [0, READ_SIDE_CONSUMERS, 0, READ_SIDE_CONSUMERS];
    const topics = ['warm-up', 'lac-1k', 'lac-10k', ...CPU_ROUNDS.map((_, round) => `cpu-${round + 1}`)].map(
      (local) => `persistent://bench/writer/${local}`,
    );
    for (const topic of topics) await admin.createTopic({ topic });
    await waitForOwner(cluster.metadataAddress, topics[0]!);
    await waitForOwner(cluster.metadataAddress, topics[0]!, 'readers');
    await warmUp(onWriter, onReader, topics[0]!);

    const lacRows = [];
    for (const [topic, rate] of [
      [topics[1]!, 1_000],
      [topics[2]!, 10_000],
    ] as const) {
      const readSide = latencyConsumer(onReader, topic, 'read-side');
      const writerSide = latencyConsumer(onWriter, topic, 'writer-side');
      await Promise.all([readSide.ready, writerSide.ready]);
      const before = await lacBuckets(readOnlyMetricsPort);
      const total = await pacedPublish(onWriter, topic, rate);
      await waitFor(() => readSide.received >= total && writerSide.received >= total, 60_000, 'every message');
      await Promise.all([readSide.stop(), writerSide.stop()]);
      const lac = bucketPercentileMs(before, await lacBuckets(readOnlyMetricsPort), 99);
      lacRows.push({
        rate,
        messages: total,
        readOnlyMsP50: ms(readSide.histogram, 50),
        readOnlyMsP99: ms(readSide.histogram, 99),
        writerMsP50: ms(writerSide.histogram, 50),
        writerMsP99: ms(writerSide.histogram, 99),
        lacNotifications: lac.count,
        lacMetricMsP99AtMost: lac.ms,
      });
    }

    // Each case twice, interleaved (0, 10, 0, 10), on topics the writer has already loaded: one
    // round alone moved with the machine's load and the writer's JIT more than with the consumers.
    const cpuTopics = topics.slice(3);
    for (const topic of cpuTopics) await publishStream(onWriter, topic, 100, () => payload);
    const cpuRows: { round: number; readSideConsumers: number; messages: number; writerCpuSeconds: number }[] = [];
    for (const [index, readers] of CPU_ROUNDS.entries()) {
      const topic = cpuTopics[index]!;
      const round = index + 1;
      const consumers = Array.from({ length: readers }, (_, i) => latencyConsumer(onReader, topic, `r${round}-${i}`));
      await Promise.all(consumers.map((c) => c.ready));
      const before = cpuSeconds(cluster.writer.pid!);
      const total = await pacedPublish(onWriter, topic, 1_000);
      await waitFor(
        () => consumers.every((c) => c.received >= total),
        60_000,
        () =>
          `every read side (round ${round}, ${total} sent, received ${consumers.map((c) => c.received).join(', ')})`,
      );
      const used = cpuSeconds(cluster.writer.pid!) - before;
      await Promise.all(consumers.map((c) => c.stop()));
      cpuRows.push({
        round,
        readSideConsumers: readers,
        messages: total,
        writerCpuSeconds: Math.round(used * 100) / 100,
      });
    }
    const cpuOf = (readers: number): number =>
      Math.round(
        cpuRows.filter((row) => row.readSideConsumers === readers).reduce((sum, row) => sum + row.writerCpuSeconds, 0) *
          100,
      ) / 100;
    const tenK = lacRows[1]!;
    return {
      section: 'Read-only fan-out (PIP-63): LAC propagation and writer CPU',
      setup:
        `${MESSAGE_BYTES} B messages paced for ${PACED_SECONDS} s per row over one gRPC Publish stream into a writer-owner process; ` +
        `latency = publish sent -> delivered to a consumer on a read-only-owner process (read side) or on the writer owner; ` +
        `lacMetricMsP99AtMost = the bucket bound of the p99 of ${LAC_METRIC} (store confirm -> LAC notification at the read-only owner); ` +
        `writer CPU (user + system, /proc) over ${PACED_SECONDS} s runs at 1000 msg/s, twice each with 0 and with ${READ_SIDE_CONSUMERS} read-side subscriptions (summed per case); ` +
        `target: read-side p99 <= ${READ_SIDE_P99_TARGET_MS} ms on loopback at 10000 msg/s (measured ${formatNumber(tenK.readOnlyMsP99)} ms)`,
      tables: [
        { title: 'LAC propagation (publish -> delivery)', rows: lacRows },
        { title: 'writer-owner CPU with read-side consumers', rows: cpuRows },
      ],
      comparisons: [
        ...lacRows.map((row) => ({
          figure: `read-only fan-out: delivery p99 at ${row.rate} msg/s, read side`,
          unit: 'ms',
          ours: row.readOnlyMsP99,
          peer: 'consumer on the writer owner (same messages)',
          peerValue: row.writerMsP99,
          higherIsBetter: false,
        })),
        {
          figure: `read-only fan-out: writer CPU with ${READ_SIDE_CONSUMERS} read-side consumers`,
          unit: 'CPU s',
          ours: cpuOf(READ_SIDE_CONSUMERS),
          peer: 'the same runs with no read-side consumer',
          peerValue: cpuOf(0),
          higherIsBetter: false,
          target: { ratio: CPU_TARGET_RATIO, atLeast: false },
        },
      ],
    };
  } finally {
    for (const client of clients) closeClient(client);
    await stopChildren(children);
    await nats.stop();
    await redis.stop();
  }
}

runAlone(module, run);
