// Writer owner publish throughput and end-to-end latency, beside the peers a
// Redis-backed log is compared against, in one run on one machine:
//
//   throughput (1 KiB messages)
//     - writer owner: one gRPC Publish stream (pipelined, deduplication on),
//       into a writer-owner process backed by Redis, metadata in a metadata
//       service process (Redis + NATS), as in a cluster
//     - raw pipelined XADD from Node to the same Redis
//     - JetStream async publish to a nats-server (file store)
//   end-to-end latency at a fixed 10K msg/s (publish -> consumer delivery)
//     - writer owner: Publish stream -> Consume stream (Exclusive, permits)
//     - Redis Streams: XADD -> XREADGROUP (BLOCK) on a second connection
//
// Client and servers share the machine's cores, so compare the rows of one
// run rather than absolute numbers across machines.
//
// Run: npx tsx bench/writer-owner-publish.ts [--full]
//   Default 30 000 messages per throughput row and 4 s of paced latency;
//   --full sends 200 000 and paces for 20 s.
import type { ChildProcess } from 'node:child_process';
import { AdminService, InitialPosition, LookupService, SubscriptionType, TopicsService } from '@ledgerline/proto';
import { closeClient, createClient } from '@ledgerline/rpc';
import { freePort, startNats, startRedis } from '@ledgerline/testing';
import {
  jetStreamPublish,
  latencyRow,
  newHistogram,
  paced as pacedAt,
  rawXadd,
  redisStreamsLatency,
  sentAtMicros,
  stamped as stampedCopy,
  startService,
  stopChild,
  throughput as throughputOf,
  type LatencyRow,
  type ThroughputRow,
} from './baselines';

const full = process.argv.includes('--full');
const MESSAGES = full ? 200_000 : 30_000;
const MESSAGE_BYTES = 1024;
const RATE_PER_SECOND = 10_000;
const PACED_SECONDS = full ? 20 : 4;
const PUBLISH_WINDOW = 2_000;
/** Messages per entry in the batched row: what a Pulsar client's batching (batchingMaxMessages) sends. */
const CLIENT_BATCH = 100;
const payload = new Uint8Array(MESSAGE_BYTES).map((_, i) => (i * 7) & 0xff);

const throughput = (system: string, messages: number, startedNs: bigint): ThroughputRow =>
  throughputOf(system, messages, MESSAGE_BYTES, startedNs);
const stamped = (): Uint8Array => stampedCopy(payload);
const paced = (send: (index: number) => void): Promise<number> => pacedAt(RATE_PER_SECOND, PACED_SECONDS, send);

/** Resolves once `condition` holds, checking every millisecond, or rejects after timeoutMs. */
async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 1));
  }
}

/** Publishes `count` messages over one Publish stream, PUBLISH_WINDOW in flight; `onReceipt` per receipt. */
async function publishStream(
  topics: ReturnType<typeof createClient<typeof TopicsService>>,
  topic: string,
  count: number,
  message: (index: number) => Uint8Array,
  pace?: (send: (index: number) => void) => Promise<number>,
  batchSize = 1,
): Promise<number> {
  const queue: Uint8Array[] = [];
  let wake: (() => void) | undefined;
  let queued = 0;
  let answered = 0;
  let done = false;
  const push = (index: number): void => {
    queue.push(message(index));
    queued++;
    wake?.();
  };
  async function* requests() {
    let sequenceId = 0n;
    for (;;) {
      const next = queue.shift();
      if (next !== undefined) {
        if (batchSize === 1) {
          yield { message: { topic, payload: next, producerName: 'bench', sequenceId: sequenceId++ } };
        } else {
          const messages = Array.from({ length: batchSize }, () => ({ payload: next }));
          yield { message: { topic, messages, producerName: 'bench', sequenceId } };
          sequenceId += BigInt(batchSize);
        }
        continue;
      }
      if (done) return;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  }
  const reading = (async () => {
    for await (const response of topics.publish(requests())) {
      if (response.result.case !== 'receipt') throw new Error(`publish failed: ${response.result.value?.reason}`);
      answered++;
      if (answered === count) return;
    }
  })();
  if (pace !== undefined) {
    await pace(push);
  } else {
    for (let i = 0; i < count; i++) {
      while ((queued - answered) * batchSize >= PUBLISH_WINDOW) await new Promise((r) => setImmediate(r));
      push(i);
    }
  }
  await reading;
  done = true;
  wake?.();
  return answered;
}

async function writerLatency(
  topics: ReturnType<typeof createClient<typeof TopicsService>>,
  topic: string,
): Promise<LatencyRow> {
  const histogram = newHistogram();
  let received = 0;
  const total = RATE_PER_SECOND * PACED_SECONDS;
  const controller = new AbortController();
  let grant: (() => void) | undefined;
  let granted = 0;
  async function* requests() {
    yield {
      command: {
        case: 'subscribe' as const,
        value: {
          topic,
          subscription: 'latency',
          type: SubscriptionType.EXCLUSIVE,
          initialPosition: InitialPosition.LATEST,
        },
      },
    };
    for (;;) {
      if (granted - received < 5_000) {
        granted += 10_000;
        yield { command: { case: 'flow' as const, value: { permits: 10_000 } } };
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
        for (const m of response.event.value.messages)
          histogram.recordValue(Math.max(1, now - sentAtMicros(m.payload)));
        received += response.event.value.messages.length;
        grant?.();
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    }
  })();
  await ready;
  await publishStream(topics, topic, total, stamped, paced);
  await until(() => received >= total, 60_000, 'every paced message to arrive');
  controller.abort();
  grant?.();
  await consuming;
  return latencyRow('writer owner: Publish -> Consume', histogram);
}

async function main(): Promise<void> {
  const redis = await startRedis();
  const nats = await startNats();
  const children: ChildProcess[] = [];
  try {
    const metadataPort = await freePort();
    children.push(
      await startService('metadata', metadataPort, {
        LEDGERLINE_REDIS_URL: redis.url,
        LEDGERLINE_NATS_URL: nats.url,
        LEDGERLINE_REDIS_KEY_PREFIX: 'bench-meta',
        LEDGERLINE_METRICS_PORT: '0',
      }),
    );
    const writerPort = await freePort();
    children.push(
      await startService('writer-owner', writerPort, {
        LEDGERLINE_METADATA_ADDRESS: `127.0.0.1:${metadataPort}`,
        LEDGERLINE_REDIS_URL: redis.url,
        LEDGERLINE_NATS_URL: nats.url,
        LEDGERLINE_REDIS_KEY_PREFIX: 'bench-ledgers',
        LEDGERLINE_ADVERTISED_ADDRESS: `127.0.0.1:${writerPort}`,
        LEDGERLINE_METRICS_PORT: '0',
      }),
    );
    const admin = createClient(AdminService, `127.0.0.1:${metadataPort}`);
    const lookup = createClient(LookupService, `127.0.0.1:${metadataPort}`);
    const topics = createClient(TopicsService, `127.0.0.1:${writerPort}`);
    await admin.createTenant({ tenant: 'bench' });
    await admin.createNamespace({ namespace: 'bench/ns', policies: { retentionTimeMinutes: 60n } });
    await admin.createTopic({ topic: 'persistent://bench/ns/throughput' });
    await admin.createTopic({ topic: 'persistent://bench/ns/latency' });
    // The writer registers a moment after its port opens: wait until the lookup names it.
    for (let attempt = 0; ; attempt++) {
      const answer = await lookup.lookupTopic({ topic: 'persistent://bench/ns/throughput' }).catch(() => undefined);
      if (answer?.advertisedAddress === `127.0.0.1:${writerPort}`) break;
      if (attempt > 600) throw new Error('the writer owner never registered');
      await new Promise((done) => setTimeout(done, 100));
    }
    // Warm-up: topic load (lease, ledger), connections, JIT.
    await publishStream(topics, 'persistent://bench/ns/throughput', 2_000, () => payload);

    const rows: ThroughputRow[] = [];
    const startedNs = process.hrtime.bigint();
    const published = await publishStream(topics, 'persistent://bench/ns/throughput', MESSAGES, () => payload);
    rows.push(throughput('writer owner: gRPC Publish stream (dedup on)', published, startedNs));
    const batchedStartedNs = process.hrtime.bigint();
    const batches = await publishStream(
      topics,
      'persistent://bench/ns/throughput',
      MESSAGES / CLIENT_BATCH,
      () => payload,
      undefined,
      CLIENT_BATCH,
    );
    rows.push(
      throughput(
        `writer owner: Publish stream, client batches of ${CLIENT_BATCH}`,
        batches * CLIENT_BATCH,
        batchedStartedNs,
      ),
    );
    rows.push(await rawXadd(redis.url, MESSAGES, payload));
    rows.push(await jetStreamPublish(nats.url, Math.min(MESSAGES, 30_000), payload));
    const latency = [
      await writerLatency(topics, 'persistent://bench/ns/latency'),
      await redisStreamsLatency(redis.url, RATE_PER_SECOND, PACED_SECONDS, payload),
    ];

    console.log(
      `\n1 KiB messages, ${MESSAGES} per throughput row; latency paced at ${RATE_PER_SECOND} msg/s for ${PACED_SECONDS} s`,
    );
    console.table(rows);
    const [writer, batched, xadd, js] = rows;
    console.log(
      `writer / raw XADD = ${(writer!.messagesPerSecond / xadd!.messagesPerSecond).toFixed(2)} (target >= 0.5); ` +
        `writer / JetStream = ${(writer!.messagesPerSecond / js!.messagesPerSecond).toFixed(2)} (target >= 2); ` +
        `batched writer / raw XADD = ${(batched!.messagesPerSecond / xadd!.messagesPerSecond).toFixed(2)}, ` +
        `/ JetStream = ${(batched!.messagesPerSecond / js!.messagesPerSecond).toFixed(2)}`,
    );
    console.table(latency);
    console.log(
      `writer p99 / Redis Streams p99 = ${(latency[0]!.latencyMsP99 / latency[1]!.latencyMsP99).toFixed(2)} (target <= 2)`,
    );
    for (const client of [admin, lookup, topics]) closeClient(client);
  } finally {
    for (const child of children.reverse()) await stopChild(child);
    await nats.stop();
    await redis.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
