// Catch-up read of a backlog through the Kafka gateway of `ledgerline standalone`
// (its own process) with kcat, beside the SDK's reader over the same backlog in
// the same run, in bytes per second. The backlog is several times the owner's
// entry cache (64 MiB by default), so most of it comes from the ledger store:
// this is the read of old entries, not the tail.
//
// Run: npx tsx bench/kafka-gateway-catch-up.ts [--full] [--backlog-mb <n>]
//   Default 128 MB, --full 500 MB (librdkafka's 0041 reads a topic of that size), the runner's default 96 MB;
//   --backlog-mb picks any size; --message-bytes (1024) and --batch (messages per entry, 100) the records' shape;
//   --partition-fetch-bytes kcat's max.partition.fetch.bytes (0041's shape: --message-bytes 500000 --batch 1
//   --partition-fetch-bytes 100000).
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type LedgerlineClient } from '@ledgerline/client';
import { freePort } from '@ledgerline/testing';
import { startStandalone, stopChild, type ThroughputRow } from './baselines.js';
import { flag, runAlone, sized, type BenchReport, type Comparison } from './bench-report.js';
import { kcatReadRow, sdkReadRow } from './read-from-start.js';

const BACKLOG_MB = flag('backlog-mb', sized({ quick: 96, normal: 128, full: 500 }));
const MESSAGE_BYTES = flag('message-bytes', 1024);
/** Messages per stored entry (100 KiB entries by default), as a batching producer stores them. */
const BATCH = flag('batch', 100);
/**
 * kcat's max.partition.fetch.bytes (librdkafka's default 1 MiB): librdkafka's 0041 reads with 100000, below one
 * 500 KB message, so every Fetch answers one entry (KIP-74's first batch).
 */
const PARTITION_FETCH_BYTES = flag('partition-fetch-bytes', 1_048_576);
const MESSAGES = Math.ceil((BACKLOG_MB * 1e6) / MESSAGE_BYTES / BATCH) * BATCH;
/** Bound on any one read: a stalled fetch fails the run instead of hanging it. */
const WAIT_MS = 600_000;
const TOPIC = 'bench-catch-up';
/** The target: a catch-up read through the gateway at least this share of the SDK reader's bytes/s. */
const TARGET_VERSUS_SDK = 0.9;
const GATEWAY_ARGS = ['--read-only-grpc-port', '0', '--kafka-host', '127.0.0.1'];
/** No newline in it: kcat prints one line per message. */
const value = Buffer.alloc(MESSAGE_BYTES, 'x');

async function preload(client: LedgerlineClient): Promise<void> {
  const producer = await client.producer({ topic: `public/default/${TOPIC}`, batching: { maxMessages: BATCH } });
  // Several batches in flight, so the preload is not one store round trip per batch.
  const inFlight = 8;
  for (let sent = 0; sent < MESSAGES; sent += BATCH * inFlight) {
    const count = Math.min(BATCH * inFlight, MESSAGES - sent);
    await Promise.all(Array.from({ length: count }, () => producer.send(value)));
  }
  await producer.close();
}

export async function run(): Promise<BenchReport> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-kafka-catch-up-'));
  let child: ChildProcess | undefined;
  let client: LedgerlineClient | undefined;
  try {
    const [grpcPort, kafkaPort] = [await freePort(), await freePort()];
    child = await startStandalone(dataDir, grpcPort, [...GATEWAY_ARGS, '--kafka-port', String(kafkaPort)]);
    client = createClient({ serviceUrl: `127.0.0.1:${grpcPort}` });
    await preload(client);
    // The SDK reads first: each pass leaves the topic's last 64 MiB in the cache, so both start alike.
    const read = { topic: TOPIC, messages: MESSAGES, messageBytes: MESSAGE_BYTES, waitMs: WAIT_MS };
    const sdk = await sdkReadRow(client, read);
    // kcat prints each message's size only (`%S`), so its own output costs little beside the read.
    const kcat = await kcatReadRow(
      `127.0.0.1:${kafkaPort}`,
      read,
      'kcat -C -c <count> from offset 0 through the gateway',
      '%S\n',
      { 'max.partition.fetch.bytes': PARTITION_FETCH_BYTES },
    );
    return report(sdk, kcat);
  } finally {
    await client?.close();
    if (child !== undefined) await stopChild(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function report(sdk: ThroughputRow, kcat: ThroughputRow | string): BenchReport {
  const rows = typeof kcat === 'string' ? [sdk] : [kcat, sdk];
  const comparisons: Comparison[] =
    typeof kcat === 'string'
      ? []
      : [
          {
            figure: `catch-up read of a ${BACKLOG_MB} MB backlog through the Kafka gateway (kcat) vs the SDK reader`,
            unit: 'MB/s',
            ours: kcat.megabytesPerSecond,
            peer: sdk.system,
            peerValue: sdk.megabytesPerSecond,
            higherIsBetter: true,
            target: { ratio: TARGET_VERSUS_SDK, atLeast: true },
          },
        ];
  return {
    section: 'Kafka gateway catch-up read',
    setup:
      `${MESSAGES} messages of ${MESSAGE_BYTES} B (${BACKLOG_MB} MB) preloaded by the SDK in entries of ${BATCH} into ` +
      'one 1-partition topic of `ledgerline standalone` (its own process, entry cache 64 MiB), then read from offset 0 ' +
      `to the end over gRPC with the SDK's reader and through its Kafka listener with kcat ` +
      `(max.partition.fetch.bytes ${PARTITION_FETCH_BYTES})`,
    tables: [{ title: 'catch-up read throughput', rows: rows.map((row) => ({ ...row })) }],
    comparisons,
    ...(typeof kcat === 'string'
      ? { notMeasured: [{ figure: 'catch-up read through the Kafka gateway (kcat)', reason: kcat }] }
      : {}),
  };
}

runAlone(module, run);
