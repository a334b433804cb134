// Writer owner publish throughput and end-to-end latency, beside the peers a
// Redis-backed log is compared against, in one run on one machine:
//
//   throughput (1 KiB messages)
//     - writer owner: one gRPC Publish stream (pipelined, deduplication on),
//       into a writer-owner process backed by Redis, metadata in a metadata
//       service process (Redis + NATS), as in a cluster; entries queued at
//       once share a request, as the SDK's producer sends them
//     - the same through the SDK's producer (libs/client), batching off and with its default settings
//     - no-op ceiling: the same stream against a server that stores nothing,
//       one entry per request and with requests coalesced
//     - raw pipelined XADD from Node to the same Redis
//     - JetStream async publish to a nats-server (file store)
//   end-to-end latency at a fixed 1K and 10K msg/s (publish -> consumer delivery)
//     - writer owner: Publish stream -> Consume stream (Exclusive, permits), the consumer acking what it
//       receives as the SDK's does (ranges, receipt with the next cursor snapshot)
//     - Redis Streams: XADD -> XREADGROUP (BLOCK) on a second connection
//     - JetStream: async publish -> pull consumer (consume(), explicit acks)
//
// Client and servers share the machine's cores, so compare the rows of one
// run rather than absolute numbers across machines.
//
// Run: npx tsx bench/writer-owner-publish.ts [--full] [--latency-only]   (also part of `npm run bench`)
//   --latency-only runs the end-to-end latency rows alone (after the same warm-up); --stage-trace adds the
//   writer owner's per-stage trace to them (p50/p99/p99.9/max per stage, GC pauses, event-loop delay).
//   Default 30 000 messages per throughput row and 4 s of paced latency per rate;
//   --full sends 200 000 and paces for 20 s; the runner's default 20 000 and 3 s.
//   BENCH_CPU_PROF=<dir> writes each service's V8 CPU profile under <dir>/<service> (and runs it from its sources).
//
// Under each full-load throughput row, each process's event-loop delay (p99
// and max over the row, event-loop-delay.ts) is reported beside the issue's
// targets.
import type { ChildProcess } from 'node:child_process';
import { createClient as createSdkClient } from '@ledgerline/client';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { AdminService, InitialPosition, LookupService, SubscriptionType, TopicsService } from '@ledgerline/proto';
import { closeClient, createClient } from '@ledgerline/rpc';
import { freePort, startNats, startRedis } from '@ledgerline/testing';
import {
  latencyRow,
  newHistogram,
  COALESCE_MAX_ENTRIES,
  JETSTREAM_WINDOW,
  jetStreamPublish,
  paced as pacedAt,
  rawXadd,
  redisStreamsLatency,
  XADD_BATCH,
  XADD_IN_FLIGHT,
  publishStream,
  PUBLISH_WINDOW,
  startScript,
  startService,
  stopChildren,
  sentAtMicros,
  stamped as stampedCopy,
  throughput as throughputOf,
  type LatencyRow,
  type ThroughputRow,
  until,
} from './baselines';
import { runAlone, sized, type BenchReport, type Comparison } from './bench-report.js';
import { scrapeStages, scrapeTrace, stageRows, traceThisProcess } from './stage-latency.js';
import { clusterProcesses, cpuNanos, cpuTableRow, metered, type CpuPerMessage, type Metered } from './process-cpu.js';
import {
  EVENT_LOOP_TABLE_TITLE,
  eventLoopComparisons,
  eventLoopRows,
  startIdleProcess,
  underWatch,
  type EventLoopDelay,
  type WatchedProcess,
} from './event-loop-delay.js';

const MESSAGES = sized({ quick: 20_000, normal: 30_000, full: 200_000 });
const MESSAGE_BYTES = 1024;
/** The OpenMessaging Benchmark's fixed rates: end-to-end latency is measured at each. */
const RATES_PER_SECOND = [1_000, 10_000];
const PACED_SECONDS = sized({ quick: 3, normal: 4, full: 20 });
/** The OpenMessaging Benchmark's topic shapes: 1 topic with 1 partition and with 16. */
const PARTITION_COUNTS = [1, 16];
/** Messages per entry in the batched row: what a Pulsar client's batching (batchingMaxMessages) sends. */
const CLIENT_BATCH = 100;
const payload = new Uint8Array(MESSAGE_BYTES).map((_, i) => (i * 7) & 0xff);
/** `--latency-only`: the end-to-end latency rows alone, to measure the tail without the throughput rows before it. */
const LATENCY_ONLY = process.argv.includes('--latency-only');
/**
 * `--stage-trace`: the writer owner runs with its per-stage trace on (LEDGERLINE_STAGE_TRACE), and the latency rows
 * report each stage's p50/p99/p99.9/max beside this process's GC pauses and event-loop delay. It costs per entry.
 */
const STAGE_TRACE = process.argv.includes('--stage-trace');

const throughput = (system: string, messages: number, startedNs: bigint): ThroughputRow =>
  throughputOf(system, messages, MESSAGE_BYTES, startedNs);
const stamped = (): Uint8Array => stampedCopy(payload);
const paced = (rate: number, send: (index: number) => void): Promise<number> => pacedAt(rate, PACED_SECONDS, send);

/**
 * Issue 40's targets: CPU per unbatched 1 KiB publish, every process ≤ 2× raw XADD's (client + Redis) and the
 * writer owner alone ≤ 2× the no-op Publish server's (gRPC and protobuf alone); the SDK producer with its default
 * settings ≤ 1× raw XADD's; unbatched throughput ≥ 0.6× XADD on 1 partition and ≥ 0.5× on 16; batches of 100
 * ≥ 0.6× the no-op server's; end-to-end p99 ≤ 2× and p99.9 ≤ 3× Redis Streams'.
 */
const CPU_TOTAL_VERSUS_XADD = 2;
const WRITER_VERSUS_NOOP_CPU = 2;
const SDK_DEFAULT_CPU_VERSUS_XADD = 1;
const UNBATCHED_VERSUS_XADD = { 1: 0.6, 16: 0.5 } as Record<number, number>;
const BATCHED_VERSUS_NOOP = 0.6;
const E2E_P99_VERSUS_REDIS = 2;
const E2E_P999_VERSUS_REDIS = 3;

/**
 * The ceiling of one Publish stream on this machine: the same client calls
 * against a server (its own process, `pid`) that stores nothing and answers
 * each request at once (bench/noop-publish-server.ts). Its CPU per message in
 * the coalesced row is the floor gRPC and protobuf set under any server that
 * takes one message per entry.
 */
async function noopCeilingRows(
  port: number,
  pid: number | undefined,
): Promise<{ rows: ThroughputRow[]; serverMicros: number }> {
  const topics = createClient(TopicsService, `127.0.0.1:${port}`);
  const topic = 'persistent://bench/ns/noop';
  try {
    await publishStream(topics, topic, 2_000, () => payload);
    const started = process.hrtime.bigint();
    const single = await publishStream(
      topics,
      topic,
      MESSAGES,
      () => payload,
      undefined,
      1,
      undefined,
      undefined,
      false,
    );
    const rows = [throughput('no-op Publish stream (stores nothing), one message per request', single, started)];
    const coalescedStarted = process.hrtime.bigint();
    const serverNanos = cpuNanos(pid);
    const coalesced = await publishStream(topics, topic, MESSAGES, () => payload);
    const serverMicros = (cpuNanos(pid) - serverNanos) / 1000 / coalesced;
    rows.push(
      throughput(
        'no-op Publish stream (stores nothing), one message per entry, requests coalesced',
        coalesced,
        coalescedStarted,
      ),
    );
    const batchedStarted = process.hrtime.bigint();
    const batches = await publishStream(topics, topic, MESSAGES / CLIENT_BATCH, () => payload, undefined, CLIENT_BATCH);
    rows.push(
      throughput(
        `no-op Publish stream (stores nothing), batches of ${CLIENT_BATCH}`,
        batches * CLIENT_BATCH,
        batchedStarted,
      ),
    );
    return { rows, serverMicros };
  } finally {
    closeClient(topics);
  }
}

/**
 * The SDK's producer (libs/client) as an application sends, PUBLISH_WINDOW sends in flight: with
 * batching off each message is its own entry, sequence id and receipt, and the producer coalesces what
 * is queued in one event-loop turn into one request; with `batching`, its default batching settings.
 */
async function sdkProducerRow(metadataAddress: string, batching: boolean): Promise<ThroughputRow> {
  const client = createSdkClient({ serviceUrl: metadataAddress });
  try {
    const producer = await client.producer({
      topic: 'persistent://bench/ns/throughput',
      ...(batching ? {} : { batching: false }),
    });
    let inFlight = 0;
    let failure: unknown;
    let wake: (() => void) | undefined;
    const answered = (): void => {
      inFlight--;
      const waiting = wake;
      wake = undefined;
      waiting?.();
    };
    const sendAll = async (count: number): Promise<void> => {
      for (let i = 0; i < count; i++) {
        inFlight++;
        producer.send(payload).then(answered, (error: unknown) => {
          failure ??= error;
          answered();
        });
        if (inFlight >= PUBLISH_WINDOW) await new Promise<void>((resolve) => (wake = resolve));
      }
      while (inFlight > 0) await new Promise<void>((resolve) => (wake = resolve));
      if (failure !== undefined) throw failure;
    };
    await sendAll(2_000);
    const started = process.hrtime.bigint();
    await sendAll(MESSAGES);
    const what = batching ? 'its default settings (batching on)' : 'batching off';
    const row = throughput(`writer owner: SDK producer (libs/client), ${what} (dedup on)`, MESSAGES, started);
    await producer.close();
    return row;
  } finally {
    await client.close();
  }
}

async function writerLatency(
  topics: ReturnType<typeof createClient<typeof TopicsService>>,
  topic: string,
  rate: number,
): Promise<{ endToEnd: LatencyRow; publish: LatencyRow }> {
  const histogram = newHistogram();
  const receipts = newHistogram();
  let received = 0;
  const total = rate * PACED_SECONDS;
  const controller = new AbortController();
  let grant: (() => void) | undefined;
  let granted = 0;
  /** What each response delivered, to acknowledge: the consumer acks every message, as an application does. */
  const acks: EntryRangeInit[][] = [];
  let ackRequests = 0;
  async function* requests() {
    yield {
      command: {
        case: 'subscribe' as const,
        value: {
          topic,
          subscription: 'latency',
          type: SubscriptionType.EXCLUSIVE,
          initialPosition: InitialPosition.LATEST,
          // Entries ready at once come in one response, as the SDK's consumer reads them.
          maxEntriesPerResponse: 1_000,
        },
      },
    };
    for (;;) {
      if (granted - received < 5_000) {
        granted += 10_000;
        yield { command: { case: 'flow' as const, value: { permits: 10_000 } } };
      }
      for (let ranges = acks.shift(); ranges !== undefined; ranges = acks.shift()) {
        // As the SDK's consumer acks what the application took: ranges of consecutive entries, a receipt that
        // waits for the cursor's next scheduled snapshot.
        const ack = { ranges, requestId: BigInt(++ackRequests), receiptWithNextSnapshot: true };
        yield { command: { case: 'ack' as const, value: ack } };
      }
      if (controller.signal.aborted) return;
      await new Promise<void>((resolve) => (grant = resolve));
    }
  }
  let subscribed: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (subscribed = resolve));
  const consuming = (async () => {
    try {
      for await (const response of topics.consume(requests(), { signal: controller.signal })) {
        if (response.event.case === 'subscribed') subscribed();
        if (response.event.case !== 'entry') continue;
        const now = performance.now() * 1000;
        const entries = [response.event.value, ...response.moreEntries];
        for (const entry of entries) {
          for (const m of entry.messages) histogram.recordValue(Math.max(1, now - sentAtMicros(m.payload)));
          received += entry.messages.length;
        }
        acks.push(entryRanges(entries));
        grant?.();
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    }
  })();
  await ready;
  await pacedReceipts(topics, topic, rate, receipts);
  await until(() => received >= total, 60_000, 'every paced message to arrive');
  controller.abort();
  grant?.();
  await consuming;
  return {
    endToEnd: latencyRow(`writer owner: Publish -> Consume at ${rate} msg/s`, histogram),
    publish: latencyRow(`writer owner: publish -> receipt at ${rate} msg/s`, receipts),
  };
}

type EntryRangeInit = { ledgerId: bigint; firstEntryId: bigint; lastEntryId: bigint };

/** Delivered entries as runs of consecutive entries of one ledger, as the SDK's consumer acks them. */
function entryRanges(entries: readonly { position?: { ledgerId: bigint; entryId: bigint } }[]): EntryRangeInit[] {
  const ranges: EntryRangeInit[] = [];
  for (const { position } of entries) {
    if (position === undefined) continue;
    const last = ranges.at(-1);
    if (last !== undefined && last.ledgerId === position.ledgerId && last.lastEntryId + 1n === position.entryId) {
      last.lastEntryId = position.entryId;
    } else {
      ranges.push({ ledgerId: position.ledgerId, firstEntryId: position.entryId, lastEntryId: position.entryId });
    }
  }
  return ranges;
}

async function jetStreamLatency(natsUrl: string, rate: number): Promise<LatencyRow> {
  const connection = await connect({ servers: natsUrl });
  const manager = await jetstreamManager(connection);
  const stream = `BENCHLAT${rate}`;
  await manager.streams.add({ name: stream, subjects: [`benchlat${rate}.>`] });
  await manager.consumers.add(stream, {
    durable_name: 'latency',
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.New,
  });
  const js = jetstream(connection);
  const consumer = await js.consumers.get(stream, 'latency');
  const messages = await consumer.consume({ max_messages: 1_000 });
  const histogram = newHistogram();
  const total = rate * PACED_SECONDS;
  let received = 0;
  const reading = (async () => {
    for await (const message of messages) {
      histogram.recordValue(Math.max(1, performance.now() * 1000 - sentAtMicros(message.data)));
      message.ack();
      if (++received >= total) break;
    }
  })();
  let failure: unknown;
  await paced(rate, () => {
    js.publish(`benchlat${rate}.latency`, stamped()).catch((error: unknown) => (failure ??= error));
  });
  if (failure !== undefined) throw failure;
  await until(() => received >= total, 60_000, 'every paced JetStream message to arrive');
  await reading;
  await manager.streams.delete(stream);
  await connection.close();
  return latencyRow(`JetStream: publish -> pull consumer at ${rate} msg/s`, histogram);
}

/** Starts Redis, NATS, a metadata service and a writer owner (each its own process), and measures every row. */
export async function run(): Promise<BenchReport> {
  const redis = await startRedis();
  const nats = await startNats();
  const children: ChildProcess[] = [];
  try {
    const metadataPort = await freePort();
    const metadataMetricsPort = await freePort();
    children.push(
      await startService('metadata', metadataPort, {
        LEDGERLINE_REDIS_URL: redis.url,
        LEDGERLINE_NATS_URL: nats.url,
        LEDGERLINE_REDIS_KEY_PREFIX: 'bench-meta',
        LEDGERLINE_METRICS_PORT: String(metadataMetricsPort),
      }),
    );
    const writerPort = await freePort();
    const writerMetricsPort = await freePort();
    children.push(
      await startService('writer-owner', writerPort, {
        LEDGERLINE_METADATA_ADDRESS: `127.0.0.1:${metadataPort}`,
        LEDGERLINE_REDIS_URL: redis.url,
        LEDGERLINE_NATS_URL: nats.url,
        LEDGERLINE_REDIS_KEY_PREFIX: 'bench-ledgers',
        LEDGERLINE_ADVERTISED_ADDRESS: `127.0.0.1:${writerPort}`,
        LEDGERLINE_METRICS_PORT: String(writerMetricsPort),
        ...(STAGE_TRACE ? { LEDGERLINE_STAGE_TRACE: 'true' } : {}),
      }),
    );
    const noopPort = await freePort();
    children.push(await startScript('noop-publish', 'noop-publish-server.ts', [String(noopPort)], noopPort));
    const idle = await startIdleProcess();
    children.push(idle.child);
    const admin = createClient(AdminService, `127.0.0.1:${metadataPort}`);
    const lookup = createClient(LookupService, `127.0.0.1:${metadataPort}`);
    const topics = createClient(TopicsService, `127.0.0.1:${writerPort}`);
    try {
      return await measure(
        admin,
        lookup,
        topics,
        writerPort,
        { port: noopPort, pid: children[2]!.pid },
        redis.url,
        nats.url,
        `127.0.0.1:${metadataPort}`,
        clusterProcesses(
          { metadata: children[0]!.pid, writer: children[1]!.pid },
          { redis: redis.pid, nats: nats.pid },
        ),
        writerMetricsPort,
        [
          { name: 'writer owner', metricsPort: writerMetricsPort },
          { name: 'metadata', metricsPort: metadataMetricsPort },
          { name: 'client', metricsPort: undefined },
          idle.watched,
        ],
      );
    } finally {
      for (const client of [admin, lookup, topics]) closeClient(client);
    }
  } finally {
    await stopChildren(children);
    await nats.stop();
    await redis.stop();
  }
}

async function measure(
  admin: ReturnType<typeof createClient<typeof AdminService>>,
  lookup: ReturnType<typeof createClient<typeof LookupService>>,
  topics: ReturnType<typeof createClient<typeof TopicsService>>,
  writerPort: number,
  noop: { port: number; pid: number | undefined },
  redisUrl: string,
  natsUrl: string,
  metadataAddress: string,
  processes: Metered,
  writerMetricsPort: number,
  watched: readonly WatchedProcess[],
): Promise<BenchReport> {
  await admin.createTenant({ tenant: 'bench' });
  await admin.createNamespace({ namespace: 'bench/ns', policies: { retentionTimeMinutes: 60n } });
  await admin.createTopic({ topic: 'persistent://bench/ns/throughput' });
  for (const rate of RATES_PER_SECOND) await admin.createTopic({ topic: `persistent://bench/ns/latency-${rate}` });
  for (const topic of partitionTopics(PARTITION_COUNTS.at(-1)!)) await admin.createTopic({ topic });
  // The writer registers a moment after its port opens: wait until the lookup names it.
  for (let attempt = 0; ; attempt++) {
    const answer = await lookup.lookupTopic({ topic: 'persistent://bench/ns/throughput' }).catch(() => undefined);
    if (answer?.advertisedAddress === `127.0.0.1:${writerPort}`) break;
    if (attempt > 600) throw new Error('the writer owner never registered');
    await new Promise((done) => setTimeout(done, 100));
  }
  // Warm-up: topic loads (lease, ledger), connections, JIT.
  await publishStream(topics, 'persistent://bench/ns/throughput', 2_000, () => payload);
  for (const name of partitionTopics(PARTITION_COUNTS.at(-1)!)) await publishStream(topics, name, 10, () => payload);

  const publishing = LATENCY_ONLY
    ? { tables: [], comparisons: [] }
    : await publishTables(topics, noop, redisUrl, natsUrl, metadataAddress, processes, watched);
  const latency = await latencyTables(topics, redisUrl, natsUrl, writerMetricsPort, noop.port);
  return {
    section: 'Publish throughput and end-to-end latency (1 KiB, writer owner on Redis)',
    setup:
      `${MESSAGES} messages per throughput row (one gRPC Publish stream per topic, ${PUBLISH_WINDOW} messages in flight in all, entries queued at once coalesced into requests of at most ${COALESCE_MAX_ENTRIES}; ` +
      `XADD in pipelines of ${XADD_BATCH}, ${XADD_IN_FLIGHT} in flight; JetStream ${JETSTREAM_WINDOW} in flight); ` +
      `latency paced for ${PACED_SECONDS} s per rate; metadata service and writer owner are separate processes`,
    tables: [...publishing.tables, ...latency.tables],
    comparisons: [...publishing.comparisons, ...latency.comparisons],
  };
}

/** The throughput rows (1 and 16 partitions, the SDK producer, the no-op ceiling), their CPU and event-loop tables. */
async function publishTables(
  topics: ReturnType<typeof createClient<typeof TopicsService>>,
  noop: { port: number; pid: number | undefined },
  redisUrl: string,
  natsUrl: string,
  metadataAddress: string,
  processes: Metered,
  watched: readonly WatchedProcess[],
): Promise<{ tables: BenchReport['tables']; comparisons: Comparison[] }> {
  const rows: ThroughputRow[] = [];
  const cpuRows: Record<string, string | number>[] = [];
  const comparisons: Comparison[] = [];
  const xaddCpu: CpuPerMessage[] = [];
  const loopRows: Record<string, string | number>[] = [];
  const loopRuns: Map<string, EventLoopDelay>[] = [];
  // The ceiling first: the writer's CPU per message is weighed against the no-op server's.
  const { rows: ceiling, serverMicros } = await noopCeilingRows(noop.port, noop.pid);
  for (const partitions of PARTITION_COUNTS) {
    const measured = await throughputRows(topics, partitions, redisUrl, natsUrl, processes, watched, serverMicros);
    rows.push(...measured.rows);
    cpuRows.push(...measured.cpuRows);
    comparisons.push(...measured.comparisons);
    xaddCpu.push(measured.xaddCpu);
    loopRows.push(...measured.loopRows);
    loopRuns.push(...measured.loopRuns);
  }
  const [single, batched, xadd, js] = rows as [ThroughputRow, ThroughputRow, ThroughputRow, ThroughputRow];
  for (const batching of [false, true]) {
    const { result: sdkRun, delays: sdkDelays } = await underWatch(watched, () =>
      metered(processes.ours, async () => ({
        row: await sdkProducerRow(metadataAddress, batching),
        messages: MESSAGES,
      })),
    );
    const sdk = sdkRun.row;
    rows.push(sdk);
    cpuRows.push(cpuTableRow(sdk.system, sdkRun.cpu, processes.ours));
    loopRows.push(...eventLoopRows(sdk.system, sdkDelays));
    loopRuns.push(sdkDelays);
    const what = `1 partition, SDK producer, ${batching ? 'its default settings (batching on)' : 'batching off'}`;
    const cpuTarget = batching ? SDK_DEFAULT_CPU_VERSUS_XADD : undefined;
    comparisons.push(...cpuComparisons(what, sdkRun.cpu, xaddCpu[0]!, serverMicros, cpuTarget));
    comparisons.push(...publishComparisons(what, sdk, xadd, js));
  }
  comparisons.push(...eventLoopComparisons(loopRuns, ['writer owner', 'metadata']));
  rows.push(...ceiling);
  comparisons.push(...ceilingComparisons(single, batched, ceiling));
  return {
    tables: [
      { title: 'publish throughput', rows: rows.map((row) => ({ ...row })) },
      { title: 'CPU time per message, each process (µs)', rows: cpuRows },
      { title: EVENT_LOOP_TABLE_TITLE, rows: loopRows },
    ],
    comparisons,
  };
}

/** The writer owner's unbatched and batched rows beside the no-op ceiling (the batched one targeted). */
function ceilingComparisons(single: ThroughputRow, batched: ThroughputRow, ceiling: ThroughputRow[]): Comparison[] {
  const versusCeiling = (figure: string, ours: ThroughputRow, noop: ThroughputRow, target?: number): Comparison => ({
    figure,
    unit: 'msg/s',
    ours: ours.messagesPerSecond,
    peer: noop.system,
    peerValue: noop.messagesPerSecond,
    higherIsBetter: true,
    ...(target === undefined ? {} : { target: { ratio: target, atLeast: true } }),
  });
  return [
    versusCeiling('publish 1 KiB, 1 partition, batching off, against the no-op ceiling', single, ceiling[1]!),
    versusCeiling(
      `publish 1 KiB, 1 partition, batches of ${CLIENT_BATCH}, against the no-op ceiling`,
      batched,
      ceiling[2]!,
      BATCHED_VERSUS_NOOP,
    ),
  ];
}

/** End-to-end latency at each fixed rate, ours beside Redis Streams and JetStream, and the writer's stage table. */
async function latencyTables(
  topics: ReturnType<typeof createClient<typeof TopicsService>>,
  redisUrl: string,
  natsUrl: string,
  writerMetricsPort: number,
  noopPort: number,
): Promise<{ tables: BenchReport['tables']; comparisons: Comparison[] }> {
  const latency: LatencyRow[] = [];
  const stages: Record<string, string | number>[] = [];
  const traced: Record<string, string | number>[] = [];
  const comparisons: Comparison[] = [];
  for (const rate of RATES_PER_SECOND) {
    const stagesBefore = await scrapeStages(writerMetricsPort);
    if (STAGE_TRACE) await scrapeTrace(writerMetricsPort, '');
    const client = STAGE_TRACE ? traceThisProcess(`at ${rate} msg/s`) : undefined;
    const { endToEnd: ours, publish } = await writerLatency(topics, `persistent://bench/ns/latency-${rate}`, rate);
    // Every scrape resets the trace: it is read first.
    if (STAGE_TRACE) traced.push(...(await scrapeTrace(writerMetricsPort, `at ${rate} msg/s`)), ...client!());
    stages.push(...stageRows(`at ${rate} msg/s`, stagesBefore, await scrapeStages(writerMetricsPort)));
    const redisStreams = await redisStreamsLatency(redisUrl, rate, PACED_SECONDS, payload);
    const jetStream = await jetStreamLatency(natsUrl, rate);
    const transport = await noopRoundTrip(noopPort, rate);
    latency.push(ours, publish, transport, redisStreams, jetStream);
    comparisons.push(
      latencyComparison(
        `end-to-end latency p99 at ${rate} msg/s`,
        ours.latencyMsP99,
        redisStreams,
        'latencyMsP99',
        E2E_P99_VERSUS_REDIS,
      ),
      latencyComparison(`end-to-end latency p99 at ${rate} msg/s`, ours.latencyMsP99, jetStream, 'latencyMsP99'),
      latencyComparison(`end-to-end latency p50 at ${rate} msg/s`, ours.latencyMsP50, redisStreams, 'latencyMsP50'),
      // The floor under any gRPC path: one hop there and back through grpc-js and protobuf, where ours takes two.
      latencyComparison(
        `one gRPC round trip p99 at ${rate} msg/s (the transport's floor)`,
        transport.latencyMsP99,
        redisStreams,
        'latencyMsP99',
      ),
      latencyComparison(
        `end-to-end latency p99.9 at ${rate} msg/s`,
        ours.latencyMsP999,
        redisStreams,
        'latencyMsP999',
        rate === 1_000 ? E2E_P999_VERSUS_REDIS : undefined,
      ),
    );
  }
  return {
    tables: [
      { title: 'end-to-end latency (publish -> delivery)', rows: latency.map((row) => ({ ...row })) },
      { title: "where the time goes in the writer owner (its stage histogram's bucket bounds)", rows: stages },
      ...(STAGE_TRACE ? [{ title: 'per-stage trace (writer owner, then this process)', rows: traced }] : []),
    ],
    comparisons,
  };
}

/**
 * Publishes PACED_SECONDS of stamped messages at `rate` msg/s on one Publish
 * stream, one per request, recording each send -> receipt latency (µs) in `receipts`.
 */
async function pacedReceipts(
  topics: ReturnType<typeof createClient<typeof TopicsService>>,
  topic: string,
  rate: number,
  receipts: ReturnType<typeof newHistogram>,
): Promise<void> {
  const sentAt: number[] = [];
  const stampedAndKept = (index: number): Uint8Array => {
    const bytes = stamped();
    sentAt[index] = sentAtMicros(bytes);
    return bytes;
  };
  await publishStream(
    topics,
    topic,
    rate * PACED_SECONDS,
    stampedAndKept,
    (send) => paced(rate, send),
    1,
    (index) => receipts.recordValue(Math.max(1, performance.now() * 1000 - sentAt[index]!)),
  );
}

/**
 * Publish -> receipt against the no-op Publish server at `rate` msg/s: one
 * round trip through grpc-js and protobuf with nothing stored, the transport's
 * share of any of our latencies (an end-to-end delivery takes two such hops).
 */
async function noopRoundTrip(port: number, rate: number): Promise<LatencyRow> {
  const topics = createClient(TopicsService, `127.0.0.1:${port}`);
  const histogram = newHistogram();
  try {
    await pacedReceipts(topics, 'persistent://bench/ns/noop-latency', rate, histogram);
  } finally {
    closeClient(topics);
  }
  return latencyRow(`no-op Publish server: publish -> receipt at ${rate} msg/s (one gRPC round trip)`, histogram);
}

/** The topics the partitioned rows publish to, as a partitioned topic's partitions would be. */
function partitionTopics(partitions: number): string[] {
  if (partitions === 1) return ['persistent://bench/ns/throughput'];
  return Array.from({ length: partitions }, (_, i) => `persistent://bench/ns/spread-${i}`);
}

/**
 * Publishes MESSAGES over `partitions` topics, one Publish stream each on one
 * connection (as the SDK's per-partition producers do), PUBLISH_WINDOW
 * messages in flight in all; unbatched, then in client batches.
 */
async function throughputRows(
  topics: ReturnType<typeof createClient<typeof TopicsService>>,
  partitions: number,
  redisUrl: string,
  natsUrl: string,
  processes: Metered,
  watched: readonly WatchedProcess[],
  ceilingMicros: number,
): Promise<{
  rows: ThroughputRow[];
  cpuRows: Record<string, string | number>[];
  comparisons: Comparison[];
  xaddCpu: CpuPerMessage;
  loopRows: Record<string, string | number>[];
  loopRuns: Map<string, EventLoopDelay>[];
}> {
  const names = partitionTopics(partitions);
  const spread = partitions === 1 ? '' : `, ${partitions} topics`;
  const publishAll = async (batchSize: number): Promise<{ row: ThroughputRow; messages: number }> => {
    const perTopic = Math.ceil(MESSAGES / partitions / batchSize);
    const window = Math.max(batchSize, Math.floor(PUBLISH_WINDOW / partitions));
    const started = process.hrtime.bigint();
    const counts = await Promise.all(
      names.map((name) =>
        publishStream(topics, name, perTopic, () => payload, undefined, batchSize, undefined, window),
      ),
    );
    const messages = counts.reduce((sum, count) => sum + count, 0) * batchSize;
    const what = batchSize === 1 ? 'one message per entry (dedup on)' : `client batches of ${batchSize}`;
    return { row: throughput(`writer owner: gRPC Publish streams, ${what}${spread}`, messages, started), messages };
  };
  // Each of our rows runs at full load: the event-loop window of every process covers it.
  const { result: writer, delays: writerDelays } = await underWatch(watched, () =>
    metered(processes.ours, () => publishAll(1)),
  );
  const { result: batched, delays: batchedDelays } = await underWatch(watched, () =>
    metered(processes.ours, () => publishAll(CLIENT_BATCH)),
  );
  const xadd = await metered(processes.peer, async () => ({
    row: await rawXadd(redisUrl, MESSAGES, payload, partitions),
    messages: MESSAGES,
  }));
  const js = await jetStreamPublish(natsUrl, Math.min(MESSAGES, 30_000), payload, partitions);
  const label = partitions === 1 ? '1 partition' : `${partitions} partitions`;
  const cpuRows = [writer, batched, xadd].map(({ row, cpu }) => cpuTableRow(row.system, cpu, processes.ours));
  return {
    rows: [writer.row, batched.row, xadd.row, js],
    cpuRows,
    comparisons: [
      ...publishComparisons(`${label}, batching off`, writer.row, xadd.row, js, UNBATCHED_VERSUS_XADD[partitions]),
      ...publishComparisons(`${label}, client batches of ${CLIENT_BATCH}`, batched.row, xadd.row, js),
      ...cpuComparisons(
        `${label}, batching off`,
        writer.cpu,
        xadd.cpu,
        ceilingMicros,
        partitions === 1 ? CPU_TOTAL_VERSUS_XADD : undefined,
        partitions === 1,
      ),
    ],
    xaddCpu: xadd.cpu,
    loopRows: [...eventLoopRows(writer.row.system, writerDelays), ...eventLoopRows(batched.row.system, batchedDelays)],
    loopRuns: [writerDelays, batchedDelays],
  };
}

/**
 * CPU per publish: our total beside raw XADD's (client + Redis), with `totalTarget` as its ratio when given,
 * and the writer owner's alone beside the no-op Publish server's (gRPC and protobuf alone), targeted when
 * `writerTargeted` (the row: 1 partition, one message per entry).
 */
function cpuComparisons(
  what: string,
  ours: CpuPerMessage,
  xadd: CpuPerMessage,
  ceilingMicros: number,
  totalTarget?: number,
  writerTargeted = false,
): Comparison[] {
  const figure = `CPU per 1 KiB publish, ${what}`;
  return [
    {
      figure: `${figure}, every process`,
      unit: 'µs/msg',
      ours: ours.total,
      peer: 'raw pipelined XADD: client + Redis',
      peerValue: xadd.total,
      higherIsBetter: false,
      ...(totalTarget === undefined ? {} : { target: { ratio: totalTarget, atLeast: false } }),
    },
    {
      figure: `${figure}, writer owner alone`,
      unit: 'µs/msg',
      ours: ours['writer owner'] ?? 0,
      peer: 'no-op Publish server (gRPC and protobuf alone), one message per entry, requests coalesced',
      peerValue: Math.round(ceilingMicros * 10) / 10,
      higherIsBetter: false,
      ...(writerTargeted ? { target: { ratio: WRITER_VERSUS_NOOP_CPU, atLeast: false } } : {}),
    },
  ];
}

function publishComparisons(
  what: string,
  ours: ThroughputRow,
  xadd: ThroughputRow,
  js: ThroughputRow,
  xaddTarget?: number,
): Comparison[] {
  const figure = `publish 1 KiB, ${what}`;
  const common = { figure, unit: 'msg/s', ours: ours.messagesPerSecond, higherIsBetter: true };
  return [
    {
      ...common,
      peer: xadd.system,
      peerValue: xadd.messagesPerSecond,
      ...(xaddTarget === undefined ? {} : { target: { ratio: xaddTarget, atLeast: true } }),
    },
    { ...common, peer: js.system, peerValue: js.messagesPerSecond },
  ];
}

function latencyComparison(
  figure: string,
  ours: number,
  peer: LatencyRow,
  field: 'latencyMsP50' | 'latencyMsP99' | 'latencyMsP999',
  targetAtMost?: number,
): Comparison {
  return {
    figure,
    unit: 'ms',
    ours,
    peer: peer.system,
    peerValue: peer[field],
    higherIsBetter: false,
    ...(targetAtMost === undefined ? {} : { target: { ratio: targetAtMost, atLeast: false } }),
  };
}

runAlone(module, run);
