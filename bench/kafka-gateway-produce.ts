// Produce 1 KiB messages through the Kafka gateway of `ledgerline standalone`
// (its own process) with kafkajs and with kcat (librdkafka), beside the SDK's
// batched publish into the same standalone in the same run. Each Kafka batch
// is one entry, as each SDK batch is. The target: produce through the
// gateway at least 0.8x the SDK's batched publish.
//
// Run: npx tsx bench/kafka-gateway-produce.ts [--full]   (also part of `npm run bench`)
//   Default 20 000 messages per row; --full 100 000; the runner's default 10 000.
import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@ledgerline/client';
import { freePort } from '@ledgerline/testing';
import { Kafka, logLevel } from 'kafkajs';
import { startStandalone, stopChild, throughput, type ThroughputRow } from './baselines.js';
import { runAlone, sized, type BenchReport, type Comparison } from './bench-report.js';

const MESSAGES = sized({ quick: 10_000, normal: 20_000, full: 100_000 });
const MESSAGE_BYTES = 1024;
/** Messages per batch (a Kafka batch, an SDK batch): one entry each. */
const BATCH = 100;
/** Batches a producer has in flight at once. */
const IN_FLIGHT = 8;
const value = Buffer.alloc(MESSAGE_BYTES, 'x');

async function kafkajsRow(broker: string): Promise<ThroughputRow> {
  const kafka = new Kafka({ clientId: 'bench', brokers: [broker], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  // The SDK's topic too: the gateway has made public/default once its port answers.
  await admin.createTopics({
    topics: ['bench-kafkajs', 'bench-sdk', 'bench-kcat'].map((topic) => ({ topic, numPartitions: 1 })),
  });
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  const messages = Array.from({ length: BATCH }, () => ({ value }));
  await producer.send({ topic: 'bench-kafkajs', acks: -1, messages });
  const started = process.hrtime.bigint();
  for (let sent = 0; sent < MESSAGES; sent += BATCH * IN_FLIGHT) {
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, () => producer.send({ topic: 'bench-kafkajs', acks: -1, messages })),
    );
  }
  const row = throughput(
    `kafkajs 2.2.4 through the gateway, batches of ${BATCH}, acks -1`,
    MESSAGES,
    MESSAGE_BYTES,
    started,
  );
  await producer.disconnect();
  return row;
}

/** kcat reads one message per line from stdin; its own start-up (about 0.1 s) is inside the figure. */
function kcatRow(broker: string): Promise<ThroughputRow | undefined> {
  const lines = `${'x'.repeat(MESSAGE_BYTES - 1)}\n`.repeat(MESSAGES);
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
              `kcat 1.7 (librdkafka 2.0) through the gateway, batches of ${BATCH}, acks all`,
              MESSAGES,
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
  await Promise.all(Array.from({ length: BATCH }, () => producer.send(value)));
  const started = process.hrtime.bigint();
  for (let sent = 0; sent < MESSAGES; sent += BATCH * IN_FLIGHT) {
    await Promise.all(Array.from({ length: BATCH * IN_FLIGHT }, () => producer.send(value)));
  }
  const row = throughput(`SDK producer, batches of ${BATCH} (the same standalone)`, MESSAGES, MESSAGE_BYTES, started);
  await client.close();
  return row;
}

export async function run(): Promise<BenchReport> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-kafka-'));
  let child: ChildProcess | undefined;
  const rows: ThroughputRow[] = [];
  let kcat: ThroughputRow | undefined;
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
    const kafkajs = await kafkajsRow(broker);
    kcat = await kcatRow(broker);
    const sdk = await sdkRow(`127.0.0.1:${grpcPort}`);
    rows.push(kafkajs, ...(kcat === undefined ? [] : [kcat]), sdk);
  } finally {
    if (child !== undefined) await stopChild(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
  const sdk = rows.at(-1)!;
  const versus = (figure: string, row: ThroughputRow): Comparison => ({
    figure,
    unit: 'msg/s',
    ours: row.messagesPerSecond,
    peer: sdk.system,
    peerValue: sdk.messagesPerSecond,
    higherIsBetter: true,
  });
  return {
    section: 'Kafka gateway produce',
    setup:
      `${MESSAGES} messages of ${MESSAGE_BYTES} B per row into \`ledgerline standalone\` (its own process): through its Kafka ` +
      `listener with kafkajs and kcat, and with the SDK over gRPC; ${IN_FLIGHT} batches of ${BATCH} in flight`,
    tables: [{ title: 'produce throughput', rows: rows.map((row) => ({ ...row })) }],
    comparisons: [
      versus('produce 1 KiB through the Kafka gateway (kafkajs) vs the SDK batched', rows[0]!),
      ...(kcat === undefined
        ? []
        : [versus('produce 1 KiB through the Kafka gateway (kcat) vs the SDK batched', kcat)]),
    ],
  };
}

runAlone(module, run);
