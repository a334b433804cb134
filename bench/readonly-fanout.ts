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
// Run: npx tsx bench/readonly-fanout.ts [--full]   (default 3 s per row, --full 15 s)
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as hdr from 'hdr-histogram-js';
import { AdminService, InitialPosition, LookupService, SubscriptionType, TopicsService } from '@ledgerline/proto';
import { closeClient, createClient, type Client } from '@ledgerline/rpc';
import { freePort, startNats, startRedis } from '@ledgerline/testing';
import { newHistogram, sentAtMicros, stamped as stampedCopy, startService } from './baselines';

const full = process.argv.includes('--full');
const PACED_SECONDS = full ? 15 : 3;
const MESSAGE_BYTES = 256;
const READ_SIDE_CONSUMERS = 10;
const CLOCK_TICKS_PER_SECOND = 100;

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
  const ready = new Promise<void>((done) => (subscribed = done));
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
  return {
    ready,
    histogram,
    get received() {
      return received;
    },
    async stop() {
      controller.abort();
      wake?.();
      await running;
    },
  };
}

/** Publishes stamped messages at `rate` per second for PACED_SECONDS over one Publish stream; resolves when all are stored. */
async function pacedPublish(topics: Topics, topic: string, rate: number): Promise<number> {
  const total = rate * PACED_SECONDS;
  const queue: Uint8Array[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  async function* requests() {
    let sequenceId = 0n;
    for (;;) {
      const next = queue.shift();
      if (next !== undefined) {
        yield { message: { topic, payload: next, producerName: `bench-${rate}`, sequenceId: sequenceId++ } };
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

async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((next) => setTimeout(next, 5));
  }
}

const ms = (histogram: hdr.Histogram, percentile: number) => histogram.getValueAtPercentile(percentile) / 1000;

async function main(): Promise<void> {
  const redis = await startRedis();
  const nats = await startNats();
  const children: ChildProcess[] = [];
  try {
    const metadataPort = await freePort();
    const shared = { LEDGERLINE_REDIS_URL: redis.url, LEDGERLINE_NATS_URL: nats.url, LEDGERLINE_METRICS_PORT: '0' };
    children.push(
      await startService('metadata', metadataPort, { ...shared, LEDGERLINE_REDIS_KEY_PREFIX: 'bench-meta' }),
    );
    const metadataAddress = `127.0.0.1:${metadataPort}`;
    const writerPort = await freePort();
    const writer = await startService('writer-owner', writerPort, {
      ...shared,
      LEDGERLINE_METADATA_ADDRESS: metadataAddress,
      LEDGERLINE_REDIS_KEY_PREFIX: 'bench-ledgers',
      LEDGERLINE_ADVERTISED_ADDRESS: `127.0.0.1:${writerPort}`,
    });
    children.push(writer);
    const readOnlyPort = await freePort();
    children.push(
      await startService('readonly-owner', readOnlyPort, {
        ...shared,
        LEDGERLINE_METADATA_ADDRESS: metadataAddress,
        LEDGERLINE_REDIS_KEY_PREFIX: 'bench-ledgers',
        LEDGERLINE_ADVERTISED_ADDRESS: `127.0.0.1:${readOnlyPort}`,
        LEDGERLINE_OWNER_GROUP: 'readers',
      }),
    );
    const admin = createClient(AdminService, metadataAddress);
    const lookup = createClient(LookupService, metadataAddress);
    const onWriter = createClient(TopicsService, `127.0.0.1:${writerPort}`);
    const onReader = createClient(TopicsService, `127.0.0.1:${readOnlyPort}`);
    await admin.createTenant({ tenant: 'bench' });
    await admin.createNamespace({ namespace: 'bench/writer', policies: { retentionTimeMinutes: 60n } });
    await admin.createNamespace({ namespace: 'bench/reader', policies: { ownerGroup: 'readers' } });
    await admin.setWriterNamespace({ namespace: 'bench/reader', writerNamespace: 'bench/writer' });
    const topics = ['lac-1k', 'lac-10k', 'cpu-0', 'cpu-10'].map((local) => `persistent://bench/writer/${local}`);
    for (const topic of topics) await admin.createTopic({ topic });
    for (let attempt = 0; ; attempt++) {
      const writerAnswer = await lookup.lookupTopic({ topic: topics[0]! }).catch(() => undefined);
      const readerAnswer = await lookup.lookupTopic({ topic: topics[0]!, group: 'readers' }).catch(() => undefined);
      if (writerAnswer?.advertisedAddress !== undefined && readerAnswer?.advertisedAddress !== undefined) break;
      if (attempt > 600) throw new Error('the owners never registered');
      await new Promise((next) => setTimeout(next, 100));
    }

    const lacRows = [];
    for (const [topic, rate] of [
      [topics[0]!, 1_000],
      [topics[1]!, 10_000],
    ] as const) {
      const readSide = latencyConsumer(onReader, topic, 'read-side');
      const writerSide = latencyConsumer(onWriter, topic, 'writer-side');
      await Promise.all([readSide.ready, writerSide.ready]);
      const total = await pacedPublish(onWriter, topic, rate);
      await waitFor(() => readSide.received >= total && writerSide.received >= total, 60_000, 'every message');
      await Promise.all([readSide.stop(), writerSide.stop()]);
      lacRows.push({
        rate,
        messages: total,
        readOnlyMsP50: ms(readSide.histogram, 50),
        readOnlyMsP99: ms(readSide.histogram, 99),
        writerMsP50: ms(writerSide.histogram, 50),
        writerMsP99: ms(writerSide.histogram, 99),
      });
    }

    const cpuRows = [];
    for (const [topic, readers] of [
      [topics[2]!, 0],
      [topics[3]!, READ_SIDE_CONSUMERS],
    ] as const) {
      const consumers = Array.from({ length: readers }, (_, i) => latencyConsumer(onReader, topic, `read-${i}`));
      await Promise.all(consumers.map((c) => c.ready));
      const before = cpuSeconds(writer.pid!);
      const total = await pacedPublish(onWriter, topic, 1_000);
      await waitFor(() => consumers.every((c) => c.received >= total), 60_000, 'every read side');
      const used = cpuSeconds(writer.pid!) - before;
      await Promise.all(consumers.map((c) => c.stop()));
      cpuRows.push({ readSideConsumers: readers, messages: total, writerCpuSeconds: used });
    }

    console.log(`\n${MESSAGE_BYTES}-byte messages, ${PACED_SECONDS} s per row; latency = publish sent -> delivered`);
    console.table(lacRows);
    console.table(cpuRows);
    const ratio = cpuRows[1]!.writerCpuSeconds / Math.max(cpuRows[0]!.writerCpuSeconds, 0.01);
    console.log(
      `writer CPU with ${READ_SIDE_CONSUMERS} read-side consumers / with none = ${ratio.toFixed(2)} (target <= 1.1); ` +
        `read-side p99 at 10K msg/s = ${lacRows[1]!.readOnlyMsP99.toFixed(2)} ms (target <= 5 ms on loopback)`,
    );
    for (const client of [admin, lookup, onWriter, onReader]) closeClient(client);
  } finally {
    for (const child of children.reverse()) child.kill('SIGTERM');
    await nats.stop();
    await redis.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
