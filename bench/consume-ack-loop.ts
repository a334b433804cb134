// The client README's consumer loop against standalone and against a cluster:
//
//   for await (const message of consumer) await consumer.ack(message);
//
// one Exclusive SDK consumer (default receiver queue of 1 000) reading a
// backlog of 1 KiB messages from `ledgerline standalone` (its own process,
// SQLite under a throwaway data directory), each message acknowledged and the
// ack awaited before the next is taken. Rows:
//
//   - default acks: ack resolves once recorded in the client and queued to
//     the owner; timed from subscribe to the last ack, and to flushAcks()
//     (every ack persisted by the owner)
//   - the same over a backlog of one message per entry (the producer's
//     batching off)
//   - ackReceipts: true: each ack waits for the owner to persist it (the
//     10 ms grouping timer and a cursor write per await), on a smaller backlog
//   - the same rows against a cluster: a metadata service and a writer owner,
//     each its own process, on a throwaway Redis and NATS
//
// The target for the default row is at least 20 000 msg/s.
//
// Run: npx tsx bench/consume-ack-loop.ts [--full]   (also part of `npm run bench`)
//   Default 50 000 messages (ackReceipts: 500); --full 200 000 (2 000); the runner's default 20 000 (200).
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient as createSdkClient, type LedgerlineClient } from '@ledgerline/client';
import { AdminService } from '@ledgerline/proto';
import { closeClient, createClient } from '@ledgerline/rpc';
import { freePort, startNats, startRedis } from '@ledgerline/testing';
import {
  startStandalone,
  startWriterCluster,
  stopChild,
  stopChildren,
  throughput,
  waitForOwner,
  produceWithSdk,
} from './baselines.js';
import { formatNumber, runAlone, sized, type BenchReport } from './bench-report.js';

const MESSAGES = sized({ quick: 20_000, normal: 50_000, full: 200_000 });
const RECEIPT_MESSAGES = sized({ quick: 200, normal: 500, full: 2_000 });
const MESSAGE_BYTES = 1024;
const TARGET_MESSAGES_PER_SECOND = 20_000;
const NAMESPACE = 'bench/acks';
const payload = new Uint8Array(MESSAGE_BYTES).map((_, i) => (i * 7) & 0xff);

interface LoopRow {
  system: string;
  messages: number;
  messagesPerSecond: number;
  /** Including the wait for the owner to persist every ack (flushAcks). */
  persistedMessagesPerSecond: number;
  target: string;
}

/** The README's loop over `count` messages: timed from subscribe to the last awaited ack, then to flushAcks. */
async function awaitedAckLoop(
  client: LedgerlineClient,
  topic: string,
  count: number,
  ackReceipts: boolean,
  label: string,
): Promise<LoopRow> {
  const started = process.hrtime.bigint();
  const consumer = await client.subscribe({ topic, subscription: 'loop', initialPosition: 'earliest', ackReceipts });
  let received = 0;
  for await (const message of consumer) {
    await consumer.ack(message);
    if (++received === count) break;
  }
  const acked = process.hrtime.bigint();
  await consumer.flushAcks();
  const persisted = process.hrtime.bigint();
  await consumer.close();
  const row = throughput(label, count, MESSAGE_BYTES, started, acked);
  const persistedRow = throughput(label, count, MESSAGE_BYTES, started, persisted);
  return {
    system: label,
    messages: count,
    messagesPerSecond: row.messagesPerSecond,
    persistedMessagesPerSecond: persistedRow.messagesPerSecond,
    target: ackReceipts ? '' : row.messagesPerSecond >= TARGET_MESSAGES_PER_SECOND ? 'met' : 'missed',
  };
}

async function rows(address: string, where: string): Promise<LoopRow[]> {
  const admin = createClient(AdminService, address);
  const topic = (name: string): string => `persistent://${NAMESPACE}/${name}`;
  const names = ['warm-up', 'batched', 'single', 'receipts'];
  try {
    await admin.createTenant({ tenant: 'bench' });
    await admin.createNamespace({ namespace: NAMESPACE, policies: { retentionTimeMinutes: 60n } });
    for (const name of names) await admin.createTopic({ topic: topic(name) });
  } finally {
    closeClient(admin);
  }
  await waitForOwner(address, topic('warm-up'));
  const client = createSdkClient({ serviceUrl: address });
  try {
    await produceWithSdk(client, topic('warm-up'), 5_000, true, payload);
    await produceWithSdk(client, topic('batched'), MESSAGES, true, payload);
    await produceWithSdk(client, topic('single'), MESSAGES, false, payload);
    await produceWithSdk(client, topic('receipts'), RECEIPT_MESSAGES, true, payload);
    // Warm-up: topic loads, connections, JIT on both sides.
    await awaitedAckLoop(client, topic('warm-up'), 5_000, false, 'warm-up');
    return [
      await awaitedAckLoop(
        client,
        topic('batched'),
        MESSAGES,
        false,
        `${where}: awaited ack, default (batched backlog)`,
      ),
      await awaitedAckLoop(
        client,
        topic('single'),
        MESSAGES,
        false,
        `${where}: awaited ack, default (one message per entry)`,
      ),
      await awaitedAckLoop(
        client,
        topic('receipts'),
        RECEIPT_MESSAGES,
        true,
        `${where}: awaited ack, ackReceipts: true`,
      ),
    ];
  } finally {
    await client.close();
  }
}

async function standaloneRows(): Promise<LoopRow[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-ack-loop-'));
  let child: ChildProcess | undefined;
  try {
    const port = await freePort();
    child = await startStandalone(dataDir, port, ['--read-only-grpc-port', '0']);
    return await rows(`127.0.0.1:${port}`, 'standalone');
  } finally {
    if (child !== undefined) await stopChild(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function clusterRows(): Promise<LoopRow[]> {
  const redis = await startRedis();
  const nats = await startNats();
  try {
    const cluster = await startWriterCluster(redis.url, nats.url, 'bench-acks');
    try {
      return await rows(cluster.metadataAddress, 'cluster');
    } finally {
      await stopChildren(cluster.children);
    }
  } finally {
    await nats.stop();
    await redis.stop();
  }
}

export async function run(): Promise<BenchReport> {
  const measured = [...(await standaloneRows()), ...(await clusterRows())];
  return {
    section: 'Consume with an awaited ack per message (standalone and cluster)',
    setup:
      `\`for await (const m of consumer) await consumer.ack(m)\` over a backlog of ${MESSAGES} messages of ${MESSAGE_BYTES} B ` +
      `(${RECEIPT_MESSAGES} with ackReceipts) from \`ledgerline standalone\` (its own process), then from a metadata service ` +
      `and a writer owner (each its own process, on Redis and NATS); one Exclusive SDK consumer, ` +
      `receiver queue 1 000; target for the default mode >= ${formatNumber(TARGET_MESSAGES_PER_SECOND)} msg/s`,
    tables: [{ title: 'messages acknowledged per second', rows: measured.map((row) => ({ ...row })) }],
    comparisons: [],
  };
}

runAlone(module, run);
