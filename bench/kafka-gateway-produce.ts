// Produce 1 KiB messages through the Kafka gateway of `ledgerline standalone`
// (its own process) with kafkajs and with kcat (librdkafka), beside the SDK's
// batched publish into the same standalone in the same run. Each Kafka batch
// is one entry, as each SDK batch is. The target (issue 42): produce
// through the gateway at least 1.0x the SDK's batched publish.
//
// Run: npx tsx bench/kafka-gateway-produce.ts [--full]   (also part of `npm run bench`)
//   Default 20 000 messages per row; --full 100 000; the runner's default 10 000.
import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@ledgerline/client';
import { freePort, startRedis, type ServerProcess } from '@ledgerline/testing';
import { Kafka, logLevel } from 'kafkajs';
import { inFlightWindow, rawXadd, startStandalone, stopChild, throughput, type ThroughputRow } from './baselines.js';
import { runAlone, sized, type BenchReport, type Comparison } from './bench-report.js';
import { startNoopKafkaBroker, type NoopKafkaBroker } from './noop-kafka-broker.js';

const MESSAGES = sized({ quick: 10_000, normal: 20_000, full: 100_000 });
const MESSAGE_BYTES = 1024;
/** Messages per batch (a Kafka batch, an SDK batch): one entry each. */
const BATCH = 100;
/** Batches a producer has in flight at once: a sliding window (inFlightWindow), not rounds. */
const IN_FLIGHT = 8;
/**
 * Messages each row sends before its clock starts: the standalone's code paths (and kafkajs's) are
 * compiled and optimised while they run, so without it the first row measured paid for that and the last
 * did not (kafkajs, first, read 0.56-0.60 of the SDK cold and 0.70-0.78 warm in the same standalone).
 */
const WARM_UP = 4_000;
/** The target: produce through the gateway at least this share of the SDK's batched publish. */
const TARGET_VERSUS_SDK = 1.0;
const value = Buffer.alloc(MESSAGE_BYTES, 'x');
const THROUGH_GATEWAY = 'through the gateway';
const INTO_NOOP = 'into a broker that stores nothing (bench/noop-kafka-broker.ts)';

/** The gateway's topics, made before the rows (the SDK's too: the gateway has made public/default once its port answers). */
async function createTopics(broker: string): Promise<void> {
  const kafka = new Kafka({ clientId: 'bench', brokers: [broker], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: ['bench-kafkajs', 'bench-sdk', 'bench-kcat'].map((topic) => ({ topic, numPartitions: 1 })),
  });
  await admin.disconnect();
}

async function kafkajsRow(broker: string, into: string): Promise<ThroughputRow> {
  const kafka = new Kafka({ clientId: 'bench', brokers: [broker], logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  const messages = Array.from({ length: BATCH }, () => ({ value }));
  const sendAll = (count: number): Promise<void> =>
    inFlightWindow(count / BATCH, IN_FLIGHT, () => producer.send({ topic: 'bench-kafkajs', acks: -1, messages }));
  await sendAll(WARM_UP);
  const started = process.hrtime.bigint();
  await sendAll(MESSAGES);
  const row = throughput(`kafkajs 2.2.4 ${into}, batches of ${BATCH}, acks -1`, MESSAGES, MESSAGE_BYTES, started);
  await producer.disconnect();
  return row;
}

/** kcat reads one message per line from stdin; its own start-up (about 0.1 s) is inside the figure. */
async function kcatRow(broker: string, into: string): Promise<ThroughputRow | undefined> {
  // A first kcat sends the warm-up; the second is measured.
  if ((await kcatProduce(broker, WARM_UP, into)) === undefined) return undefined;
  return kcatProduce(broker, MESSAGES, into);
}

function kcatProduce(broker: string, count: number, into: string): Promise<ThroughputRow | undefined> {
  const lines = `${'x'.repeat(MESSAGE_BYTES - 1)}\n`.repeat(count);
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    const child = execFile(
      'kcat',
      ['-b', broker, '-P', '-t', 'bench-kcat', '-X', 'acks=all', '-X', `batch.num.messages=${BATCH}`],
      { timeout: 120_000, maxBuffer: 1024 * 1024 },
      (error) => {
        if (error !== null) resolve(undefined);
        else
          resolve(
            throughput(
              `kcat 1.7 (librdkafka 2.0) ${into}, batches of ${BATCH}, acks all`,
              count,
              MESSAGE_BYTES,
              started,
            ),
          );
      },
    );
    child.stdin?.end(lines);
  });
}

async function sdkRow(grpcAddress: string): Promise<ThroughputRow> {
  const client = createClient({ serviceUrl: grpcAddress });
  const producer = await client.producer({
    topic: 'public/default/bench-sdk',
    batching: { maxMessages: BATCH, maxDelayMs: 5 },
  });
  const sendAll = (count: number): Promise<void> =>
    inFlightWindow(count, BATCH * IN_FLIGHT, () => producer.send(value));
  await sendAll(WARM_UP);
  const started = process.hrtime.bigint();
  await sendAll(MESSAGES);
  const row = throughput(`SDK producer, batches of ${BATCH} (the same standalone)`, MESSAGES, MESSAGE_BYTES, started);
  await client.close();
  return row;
}

/** Runs a row against the no-op broker and checks it carried every record sent, warm-up included. */
async function carriedAll<T>(noop: NoopKafkaBroker, row: () => Promise<T>): Promise<T> {
  const before = noop.recordsStored();
  const measured = await row();
  const carried = noop.recordsStored() - before;
  if (measured !== undefined && carried !== WARM_UP + MESSAGES) {
    throw new Error(`the no-op broker was sent ${carried} records, not ${WARM_UP + MESSAGES}: the ceiling row is void`);
  }
  return measured;
}

export async function run(): Promise<BenchReport> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-kafka-'));
  let child: ChildProcess | undefined;
  let redis: ServerProcess | undefined;
  let noop: NoopKafkaBroker | undefined;
  let measured: {
    kafkajs: ThroughputRow;
    kcat: ThroughputRow | undefined;
    sdk: ThroughputRow;
    xadd: ThroughputRow;
    kafkajsCeiling: ThroughputRow;
    kcatCeiling: ThroughputRow | undefined;
  };
  try {
    const [grpcPort, kafkaPort] = [await freePort(), await freePort()];
    child = await startStandalone(dataDir, grpcPort, [
      '--read-only-grpc-port',
      '0',
      '--kafka-host',
      '127.0.0.1',
      '--kafka-port',
      String(kafkaPort),
    ]);
    const broker = `127.0.0.1:${kafkaPort}`;
    await createTopics(broker);
    const kafkajs = await kafkajsRow(broker, THROUGH_GATEWAY);
    const kcat = await kcatRow(broker, THROUGH_GATEWAY);
    const sdk = await sdkRow(`127.0.0.1:${grpcPort}`);
    await stopChild(child);
    child = undefined;
    // The clients' own ceilings: the same sends into a broker that stores nothing.
    noop = await startNoopKafkaBroker();
    const kafkajsCeiling = await carriedAll(noop, () => kafkajsRow(noop!.address, INTO_NOOP));
    const kcatCeiling = await carriedAll(noop, () => kcatRow(noop!.address, INTO_NOOP));
    redis = await startRedis();
    const xadd = await rawXadd(redis.url, MESSAGES, value, 1, 'a Redis of its own');
    measured = { kafkajs, kcat, sdk, xadd, kafkajsCeiling, kcatCeiling };
  } finally {
    if (child !== undefined) await stopChild(child);
    await noop?.close();
    await redis?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const { kafkajs, kcat, sdk, xadd, kafkajsCeiling, kcatCeiling } = measured;
  const rows = [kafkajs, kcat, sdk, kafkajsCeiling, kcatCeiling, xadd].filter((row) => row !== undefined);
  const versus = (figure: string, row: ThroughputRow, targeted = true): Comparison => ({
    figure,
    unit: 'msg/s',
    ours: row.messagesPerSecond,
    peer: sdk.system,
    peerValue: sdk.messagesPerSecond,
    higherIsBetter: true,
    ...(targeted ? { target: { ratio: TARGET_VERSUS_SDK, atLeast: true } } : {}),
  });
  // A client whose ceiling is below the SDK's row cannot meet the target through any broker: the floor beside it.
  const ceiling = (client: string, row: ThroughputRow) =>
    versus(
      `produce 1 KiB: ${client} into a broker that stores nothing (the client's own ceiling) vs the SDK batched`,
      row,
      false,
    );
  return {
    section: 'Kafka gateway produce',
    setup:
      `${MESSAGES} messages of ${MESSAGE_BYTES} B per row into \`ledgerline standalone\` (its own process): through its Kafka ` +
      `listener with kafkajs and kcat, and with the SDK over gRPC; ${IN_FLIGHT} batches of ${BATCH} in flight; each row ` +
      `first sends ${WARM_UP} messages unmeasured; the gateway calls the writer owner in process, as standalone hosts both; ` +
      'then the same kafkajs and kcat sends into a Kafka broker that stores nothing (bench/noop-kafka-broker.ts: the ' +
      "clients' own ceilings); raw pipelined XADD of the same messages into a throwaway Redis for scale",
    tables: [{ title: 'produce throughput', rows: rows.map((row) => ({ ...row })) }],
    comparisons: [
      versus('produce 1 KiB through the Kafka gateway (kafkajs) vs the SDK batched', kafkajs),
      ...(kcat === undefined
        ? []
        : [versus('produce 1 KiB through the Kafka gateway (kcat) vs the SDK batched', kcat)]),
      ceiling('kafkajs', kafkajsCeiling),
      ...(kcatCeiling === undefined ? [] : [ceiling('kcat', kcatCeiling)]),
    ],
  };
}

runAlone(module, run);
