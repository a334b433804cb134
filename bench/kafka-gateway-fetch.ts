// Fetch throughput through the Kafka gateway of `ledgerline standalone` (its
// own process) with kafkajs and kcat, from offset 0 of a preloaded 1-partition
// topic, and the same reads from a broker that stores nothing and answers from
// a log of the same records held in memory (bench/noop-kafka-broker.ts: each
// client's own ceiling, so the gap between the two rows is ours), and end-to-end latency of a paced kafkajs producer -> consumer stream
// through it with kafkajs and with confluent-kafka (bench/kafka-confluent-e2e.py,
// Debian's python3-confluent-kafka); beside the SDK's reader, and the SDK's producer -> consumer,
// against the same standalone in the same run. Every client but kcat runs in
// this process, so a send-stamped value is read back on the clock that stamped it.
//
// Run: npx tsx bench/kafka-gateway-fetch.ts [--full]   (also part of `npm run bench`)
//   Default 20 000 messages and 10 s of paced latency; --full 100 000 and 30 s; the runner's default 10 000 and 5 s.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type LedgerlineClient } from '@ledgerline/client';
import { freePort } from '@ledgerline/testing';
import { Kafka, logLevel } from 'kafkajs';
import {
  latencyRow,
  newHistogram,
  paced,
  sentAtMicros,
  stamped,
  startStandalone,
  stopChild,
  throughput,
  until,
  within,
  type LatencyRow,
  type ThroughputRow,
} from './baselines.js';
import { runAlone, sized, type BenchReport, type Comparison } from './bench-report.js';
import { NoopLog, noopLog, startNoopKafkaBroker } from './noop-kafka-broker.js';
import { kcatReadRow, sdkReadRow } from './read-from-start.js';

const MESSAGES = sized({ quick: 10_000, normal: 20_000, full: 100_000 });
const MESSAGE_BYTES = 1024;
/** Messages per preloaded entry, as the produce bench's batches store them. */
const BATCH = 100;
const RATE = 1_000;
const PACED_SECONDS = sized({ quick: 5, normal: 10, full: 30 });
/** Bound on any one wait: a stalled fetch or a lost message fails the run instead of hanging it. */
const WAIT_MS = 120_000;
const FETCH_TOPIC = 'bench-fetch';
/** The preloaded topic every fetch row reads from offset 0. */
const fetched = { topic: FETCH_TOPIC, messages: MESSAGES, messageBytes: MESSAGE_BYTES, waitMs: WAIT_MS };
const KCAT_FETCH_LABEL = 'kcat 1.7 (librdkafka 2.0) -C -c <count> through the gateway (its start-up inside the figure)';
const FROM_NOOP = 'from a broker that stores nothing (bench/noop-kafka-broker.ts, the log in memory)';
const KEEPS_IN_MEMORY =
  "through a broker that keeps what is produced in memory (bench/noop-kafka-broker.ts: the client's own floor)";
const LATENCY_TOPICS = {
  kafkajs: 'bench-latency-kafkajs',
  confluent: 'bench-latency-confluent',
  sdk: 'bench-latency-sdk',
};
/** Debian's python3-confluent-kafka is installed for the system's Python, not whichever python3 is first on PATH. */
const PYTHON = '/usr/bin/python3';
const CONFLUENT_SCRIPT = join(__dirname, 'kafka-confluent-e2e.py');
/** A group's first join would otherwise wait 3 s for more members, inside the kafkajs rows. */
const NO_JOIN_DELAY = ['--group-initial-rebalance-delay-ms', '0'];
const GATEWAY_ARGS = ['--read-only-grpc-port', '0', '--kafka-host', '127.0.0.1', ...NO_JOIN_DELAY];
/** No newline in it: kcat prints one value per line. */
const value = Buffer.alloc(MESSAGE_BYTES, 'x');
const sdkTopic = (name: string): string => `public/default/${name}`;

async function preload(client: LedgerlineClient): Promise<void> {
  const producer = await client.producer({ topic: sdkTopic(FETCH_TOPIC), batching: { maxMessages: BATCH } });
  for (let sent = 0; sent < MESSAGES; sent += BATCH) {
    await Promise.all(Array.from({ length: BATCH }, () => producer.send(value)));
  }
  await producer.close();
}

async function kafkajsFetchRow(kafka: Kafka, from = 'through the gateway'): Promise<ThroughputRow> {
  const consumer = kafka.consumer({ groupId: 'bench-fetch' });
  let received = 0;
  let reachedAll = (_at: bigint): void => undefined;
  const all = new Promise<bigint>((resolve) => (reachedAll = resolve));
  try {
    await consumer.connect();
    await consumer.subscribe({ topic: FETCH_TOPIC, fromBeginning: true });
    const started = process.hrtime.bigint();
    await consumer.run({
      eachBatch: async ({ batch }) => {
        received += batch.messages.length;
        if (received >= MESSAGES) reachedAll(process.hrtime.bigint());
      },
    });
    const finished = await within(all, WAIT_MS, `kafkajs to fetch ${MESSAGES} messages`);
    const label = `kafkajs 2.2.4 consumer group, eachBatch, ${from} (group join inside the figure)`;
    return throughput(label, MESSAGES, MESSAGE_BYTES, started, finished);
  } finally {
    await consumer.disconnect();
  }
}

/** Deliveries of a paced stream: the first is the warm-up message, which carries no send time. */
class Deliveries {
  readonly histogram = newHistogram();
  count = 0;

  record(bytes: Uint8Array): void {
    if (this.count++ > 0) this.histogram.recordValue(Math.max(1, performance.now() * 1000 - sentAtMicros(bytes)));
  }
}

/**
 * Sends one warm-up message and waits for it (the consumer then holds its
 * partition and its position), then RATE messages a second on paced's
 * absolute schedule, none awaited, so a slow send never lowers the rate.
 */
async function pacedThrough(send: (bytes: Uint8Array) => Promise<unknown>, to: Deliveries, what: string) {
  let failure: unknown;
  await send(value);
  await until(() => to.count >= 1, WAIT_MS, `the ${what} warm-up message`);
  const total = await paced(RATE, PACED_SECONDS, () => {
    send(stamped(value)).catch((error: unknown) => (failure ??= error));
  });
  await until(() => failure !== undefined || to.count > total, WAIT_MS, `every paced ${what} message`);
  if (failure !== undefined) throw failure;
}

async function kafkajsLatencyRow(kafka: Kafka, through = 'through the gateway'): Promise<LatencyRow> {
  const deliveries = new Deliveries();
  const consumer = kafka.consumer({ groupId: 'bench-latency' });
  const producer = kafka.producer();
  try {
    await Promise.all([consumer.connect(), producer.connect()]);
    await consumer.subscribe({ topic: LATENCY_TOPICS.kafkajs, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => deliveries.record(message.value!) });
    const send = (bytes: Uint8Array) =>
      producer.send({ topic: LATENCY_TOPICS.kafkajs, acks: -1, messages: [{ value: Buffer.from(bytes) }] });
    await pacedThrough(send, deliveries, 'kafkajs');
  } finally {
    await Promise.all([consumer.disconnect(), producer.disconnect()]);
  }
  const label = 'kafkajs producer (acks -1) -> kafkajs consumer group (commits after every batch, its default)';
  return latencyRow(`${label}, ${through}`, deliveries.histogram);
}

/** One run of the confluent-kafka helper (bench/kafka-confluent-e2e.py) to its end. */
function confluentProduce(broker: string, count: number): Promise<void> {
  const args = [CONFLUENT_SCRIPT, 'produce', broker, LATENCY_TOPICS.confluent, String(count), String(RATE)];
  return new Promise((resolve, reject) => {
    execFile(PYTHON, args, { timeout: WAIT_MS }, (error, _stdout, stderr) =>
      error === null ? resolve() : reject(new Error(`confluent-kafka producer failed: ${error.message}\n${stderr}`)),
    );
  });
}

/**
 * confluent-kafka (librdkafka) producer -> group consumer, each in its own
 * Python process, timed on CLOCK_MONOTONIC by the two of them: a warm-up
 * message first (the consumer then holds its partition), then RATE msg/s.
 */
async function confluentLatencyRow(broker: string): Promise<LatencyRow | string> {
  const count = RATE * PACED_SECONDS;
  const args = [
    CONFLUENT_SCRIPT,
    'consume',
    broker,
    LATENCY_TOPICS.confluent,
    'bench-latency-confluent',
    String(count),
  ];
  const consumer = spawn(PYTHON, args, { stdio: ['ignore', 'pipe', 'inherit'], timeout: WAIT_MS });
  const histogram = newHistogram();
  let warm = (): void => undefined;
  const warmed = new Promise<void>((resolve) => (warm = resolve));
  const lines = createInterface({ input: consumer.stdout });
  lines.on('line', (line) => {
    if (line === 'warm') warm();
    else if (line !== 'done') histogram.recordValue(Math.max(1, Number(line)));
  });
  const ended = new Promise<number | null>((resolve) => consumer.once('close', resolve));
  try {
    await confluentProduce(broker, 0);
    await within(warmed, WAIT_MS, 'the confluent-kafka consumer to read the warm-up message');
    await confluentProduce(broker, count);
    const code = await within(ended, WAIT_MS, `the confluent-kafka consumer to read ${count} messages`);
    if (code !== 0 || histogram.totalCount !== count) {
      return `the confluent-kafka consumer ended with code ${code} after ${histogram.totalCount} of ${count} messages`;
    }
  } catch (error) {
    return String(error);
  } finally {
    if (consumer.exitCode === null) await stopChild(consumer);
  }
  const label = 'confluent-kafka 1.7 (librdkafka 2.0) producer (acks all, linger.ms 0) -> its consumer group';
  return latencyRow(`${label}, through the gateway`, histogram);
}

async function sdkLatencyRow(client: LedgerlineClient): Promise<LatencyRow> {
  const deliveries = new Deliveries();
  const topic = sdkTopic(LATENCY_TOPICS.sdk);
  const consumer = await client.subscribe({ topic, subscription: 'latency', initialPosition: 'earliest' });
  const reading = (async () => {
    for await (const message of consumer) {
      deliveries.record(message.payload);
      await consumer.ack(message);
    }
  })();
  reading.catch(() => undefined);
  const producer = await client.producer({ topic, batching: false });
  try {
    await pacedThrough((bytes) => producer.send(bytes), deliveries, 'SDK');
  } finally {
    await producer.close();
    await consumer.close();
  }
  return latencyRow('SDK producer (batching off) -> SDK consumer (the same standalone)', deliveries.histogram);
}

/**
 * kafkajs and kcat reading the same records from the no-op broker: a group of one member whose commits cost only
 * their round trip, and Fetch answers of the same batches (entries of BATCH records) from memory.
 */
async function clientCeilings(): Promise<Pick<Rows, 'kafkajsCeiling' | 'kcatCeiling'>> {
  const noop = await startNoopKafkaBroker(noopLog(MESSAGES, value, BATCH));
  try {
    const kafka = new Kafka({ clientId: 'bench', brokers: [noop.address], logLevel: logLevel.NOTHING });
    return {
      kafkajsCeiling: await kafkajsFetchRow(kafka, FROM_NOOP),
      kcatCeiling: await kcatReadRow(noop.address, fetched, `kcat 1.7 (librdkafka 2.0) -C -c <count> ${FROM_NOOP}`),
    };
  } finally {
    await noop.close();
  }
}

/**
 * kafkajs's producer and consumer group through the no-op broker keeping what is produced in memory: every
 * Produce and OffsetCommit answered at once, each Fetch as soon as a record is there. What is left is the
 * client's own end to end on this machine, the floor of any broker's kafkajs row.
 */
async function kafkajsLatencyFloor(): Promise<LatencyRow> {
  const noop = await startNoopKafkaBroker(new NoopLog(), true);
  try {
    const kafka = new Kafka({ clientId: 'bench', brokers: [noop.address], logLevel: logLevel.NOTHING });
    return await kafkajsLatencyRow(kafka, KEEPS_IN_MEMORY);
  } finally {
    await noop.close();
  }
}

export async function run(): Promise<BenchReport> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-kafka-fetch-'));
  let child: ChildProcess | undefined;
  let client: LedgerlineClient | undefined;
  try {
    const [grpcPort, kafkaPort] = [await freePort(), await freePort()];
    child = await startStandalone(dataDir, grpcPort, [...GATEWAY_ARGS, '--kafka-port', String(kafkaPort)]);
    const broker = `127.0.0.1:${kafkaPort}`;
    const kafka = new Kafka({ clientId: 'bench', brokers: [broker], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      topics: [FETCH_TOPIC, ...Object.values(LATENCY_TOPICS)].map((topic) => ({ topic, numPartitions: 1 })),
    });
    await admin.disconnect();
    client = createClient({ serviceUrl: `127.0.0.1:${grpcPort}` });
    await preload(client);
    const ceilings = await clientCeilings();
    return report({
      kafkajsFetch: await kafkajsFetchRow(kafka),
      kcatFetch: await kcatReadRow(broker, fetched, KCAT_FETCH_LABEL),
      sdkFetch: await sdkReadRow(client, fetched),
      ...ceilings,
      kafkajsLatency: await kafkajsLatencyRow(kafka),
      kafkajsLatencyFloor: await kafkajsLatencyFloor(),
      confluentLatency: await confluentLatencyRow(broker),
      sdkLatency: await sdkLatencyRow(client),
    });
  } finally {
    await client?.close();
    if (child !== undefined) await stopChild(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

interface Rows {
  kafkajsFetch: ThroughputRow;
  /** Why kcat has no row, when it has none. */
  kcatFetch: ThroughputRow | string;
  sdkFetch: ThroughputRow;
  /** The same reads from the no-op broker: each client's own ceiling. */
  kafkajsCeiling: ThroughputRow;
  kcatCeiling: ThroughputRow | string;
  kafkajsLatency: LatencyRow;
  /** The same stream through the no-op broker keeping it in memory: kafkajs's own floor. */
  kafkajsLatencyFloor: LatencyRow;
  /** Why confluent-kafka has no row, when it has none. */
  confluentLatency: LatencyRow | string;
  sdkLatency: LatencyRow;
}

/** The target: end-to-end p99 through the gateway at most this multiple of the SDK's. */
const LATENCY_TARGET_VERSUS_SDK = 1.5;
/** The target: fetch through the gateway at least this share of the SDK reader. */
const FETCH_TARGET_VERSUS_SDK = 0.9;

function report(rows: Rows): BenchReport {
  const { kafkajsFetch, kcatFetch, sdkFetch, kafkajsLatency, confluentLatency, sdkLatency } = rows;
  const kcat = typeof kcatFetch === 'string' ? [] : [kcatFetch];
  const kcatCeiling = typeof rows.kcatCeiling === 'string' ? [] : [rows.kcatCeiling];
  const confluent = typeof confluentLatency === 'string' ? [] : [confluentLatency];
  const fetchVersus = (client: string, row: ThroughputRow): Comparison => ({
    figure: `fetch 1 KiB from offset 0 through the Kafka gateway (${client}) vs the SDK reader`,
    unit: 'msg/s',
    ours: row.messagesPerSecond,
    peer: sdkFetch.system,
    peerValue: sdkFetch.messagesPerSecond,
    higherIsBetter: true,
    target: { ratio: FETCH_TARGET_VERSUS_SDK, atLeast: true },
  });
  // A client whose ceiling is below the target cannot meet it through any broker: the ceiling beside it.
  const ceilingVersus = (client: string, row: ThroughputRow): Comparison => ({
    figure: `fetch 1 KiB from offset 0: ${client} from a broker that stores nothing (the client's own ceiling) vs the SDK reader`,
    unit: 'msg/s',
    ours: row.messagesPerSecond,
    peer: sdkFetch.system,
    peerValue: sdkFetch.messagesPerSecond,
    higherIsBetter: true,
  });
  const latencyVersus = (client: string, row: LatencyRow): Comparison => ({
    figure: `end-to-end latency p99 at ${RATE} msg/s through the Kafka gateway (${client})`,
    unit: 'ms',
    ours: row.latencyMsP99,
    peer: sdkLatency.system,
    peerValue: sdkLatency.latencyMsP99,
    higherIsBetter: false,
    target: { ratio: LATENCY_TARGET_VERSUS_SDK, atLeast: false },
  });
  const notMeasured = [
    ...(typeof kcatFetch === 'string'
      ? [{ figure: 'fetch 1 KiB through the Kafka gateway (kcat)', reason: kcatFetch }]
      : []),
    ...(typeof rows.kcatCeiling === 'string'
      ? [{ figure: 'fetch 1 KiB from a broker that stores nothing (kcat)', reason: rows.kcatCeiling }]
      : []),
    ...(typeof confluentLatency === 'string'
      ? [{ figure: 'end-to-end latency through the Kafka gateway (confluent-kafka)', reason: confluentLatency }]
      : []),
  ];
  return {
    section: 'Kafka gateway fetch and end-to-end latency',
    setup:
      `${MESSAGES} messages of ${MESSAGE_BYTES} B preloaded by the SDK in entries of ${BATCH} into one 1-partition topic of ` +
      '`ledgerline standalone` (its own process), read from offset 0 to the end through its Kafka listener with kafkajs ' +
      `and kcat (which stops at the count, as the SDK's reader does) and over gRPC with the SDK's reader, and by the same ` +
      `clients from a broker that stores nothing, the same batches in memory (bench/noop-kafka-broker.ts); then ${RATE} msg/s for ${PACED_SECONDS} s, one message per send, ` +
      'through the gateway with kafkajs and with confluent-kafka (producer and consumer in processes of their own), with ' +
      'kafkajs through the no-op broker keeping what is produced in memory (its own floor), and ' +
      'over gRPC with the SDK, latency from the send time stamped in each value',
    tables: [
      {
        title: 'fetch throughput',
        rows: [kafkajsFetch, ...kcat, sdkFetch, rows.kafkajsCeiling, ...kcatCeiling].map((row) => ({ ...row })),
      },
      {
        title: `end-to-end latency at ${RATE} msg/s`,
        rows: [kafkajsLatency, rows.kafkajsLatencyFloor, ...confluent, sdkLatency].map((row) => ({ ...row })),
      },
    ],
    comparisons: [
      fetchVersus('kafkajs', kafkajsFetch),
      ...kcat.map((row) => fetchVersus('kcat', row)),
      ceilingVersus('kafkajs', rows.kafkajsCeiling),
      ...kcatCeiling.map((row) => ceilingVersus('kcat', row)),
      latencyVersus('kafkajs', kafkajsLatency),
      // A client whose own floor is above the target cannot meet it through any broker: the floor beside it.
      {
        figure: `end-to-end latency p99 at ${RATE} msg/s: kafkajs through a broker that keeps it in memory (the client's own floor)`,
        unit: 'ms',
        ours: rows.kafkajsLatencyFloor.latencyMsP99,
        peer: sdkLatency.system,
        peerValue: sdkLatency.latencyMsP99,
        higherIsBetter: false,
      },
      ...confluent.map((row) => latencyVersus('confluent-kafka', row)),
    ],
    ...(notMeasured.length > 0 ? { notMeasured } : {}),
  };
}

runAlone(module, run);
