// What the writer owner's figures are compared against, run from Node on the
// same machine in the same run: raw pipelined XADD to the ledger Redis,
// JetStream async publish to a nats-server, and Redis Streams end-to-end
// latency (XADD -> XREADGROUP) at a fixed rate. Shared by the bench scripts,
// with the process helpers they use to start services as in a cluster.
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import * as hdr from 'hdr-histogram-js';
import { Redis } from 'ioredis';
import { waitForPort } from '@ledgerline/testing';

export const ROOT = resolve(__dirname, '..');
const XADD_BATCH = 100;
const XADD_IN_FLIGHT = 8;
const JETSTREAM_WINDOW = 1_000;

export interface ThroughputRow {
  system: string;
  messagesPerSecond: number;
  megabytesPerSecond: number;
}

export interface LatencyRow {
  system: string;
  messages: number;
  latencyMsP50: number;
  latencyMsP99: number;
  latencyMsP999: number;
}

export function throughput(system: string, messages: number, messageBytes: number, startedNs: bigint): ThroughputRow {
  const seconds = Number(process.hrtime.bigint() - startedNs) / 1e9;
  return {
    system,
    messagesPerSecond: Math.round(messages / seconds),
    megabytesPerSecond: Math.round((messages * messageBytes) / seconds / 1e5) / 10,
  };
}

export function newHistogram(): hdr.Histogram {
  return hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000 });
}

export function latencyRow(system: string, histogram: hdr.Histogram): LatencyRow {
  return {
    system,
    messages: histogram.totalCount,
    latencyMsP50: histogram.getValueAtPercentile(50) / 1000,
    latencyMsP99: histogram.getValueAtPercentile(99) / 1000,
    latencyMsP999: histogram.getValueAtPercentile(99.9) / 1000,
  };
}

/** A copy of `payload` whose first 8 bytes are the send time in microseconds (this process's clock). */
export function stamped(payload: Uint8Array): Uint8Array {
  const bytes = Uint8Array.from(payload);
  new DataView(bytes.buffer).setFloat64(0, performance.now() * 1000);
  return bytes;
}

export function sentAtMicros(bytes: Uint8Array): number {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getFloat64(0);
}

/** Calls `send(i)` for i = 0.. at `ratePerSecond` for `seconds`, catching up on every timer tick. */
export async function paced(ratePerSecond: number, seconds: number, send: (index: number) => void): Promise<number> {
  const total = ratePerSecond * seconds;
  const started = performance.now();
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) * ratePerSecond) / 1000));
    while (sent < due) send(sent++);
    await new Promise((done) => setTimeout(done, 1));
  }
  return total;
}

/** A service as its own process (node with tsx's loader), as in a cluster; resolves once its port opens. */
export async function startService(app: string, port: number, settings: Record<string, string>): Promise<ChildProcess> {
  const kept = Object.entries(process.env).filter(([key]) => !key.startsWith('LEDGERLINE_'));
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'apps', app, 'src/main.ts')], {
    cwd: ROOT,
    env: { ...Object.fromEntries(kept), ...settings, LEDGERLINE_GRPC_PORT: String(port), LEDGERLINE_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await waitForPort(port, 120_000);
  return child;
}

/** SIGTERM, then SIGKILL after a bounded wait: every child this script started, by its handle. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((done) => setTimeout(done, 15_000))]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** `messages` XADDs of `payload`, pipelined XADD_BATCH at a time with XADD_IN_FLIGHT pipelines in flight. */
export async function rawXadd(redisUrl: string, messages: number, payload: Uint8Array): Promise<ThroughputRow> {
  const redis = new Redis(redisUrl);
  const key = 'bench:xadd';
  const buffer = Buffer.from(payload);
  let next = 0;
  const batches = Math.ceil(messages / XADD_BATCH);
  const worker = async (): Promise<void> => {
    while (next < batches) {
      next++;
      const pipeline = redis.pipeline();
      for (let i = 0; i < XADD_BATCH; i++) pipeline.xadd(key, '*', 'd', buffer);
      await pipeline.exec();
    }
  };
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: XADD_IN_FLIGHT }, worker));
  const row = throughput('raw pipelined XADD (same Redis)', batches * XADD_BATCH, payload.length, started);
  await redis.del(key);
  redis.disconnect();
  return row;
}

/** `messages` JetStream publishes of `payload` (file store), JETSTREAM_WINDOW awaiting their acks. */
export async function jetStreamPublish(natsUrl: string, messages: number, payload: Uint8Array): Promise<ThroughputRow> {
  const connection = await connect({ servers: natsUrl });
  const manager = await jetstreamManager(connection);
  await manager.streams.add({ name: 'BENCH', subjects: ['bench.>'] });
  const js = jetstream(connection);
  const inFlight = new Set<Promise<unknown>>();
  const started = process.hrtime.bigint();
  for (let i = 0; i < messages; i++) {
    const publishing = js.publish('bench.publish', payload);
    inFlight.add(publishing);
    // A failed publish fails the run at Promise.race / Promise.all below.
    publishing.then(
      () => inFlight.delete(publishing),
      () => inFlight.delete(publishing),
    );
    if (inFlight.size >= JETSTREAM_WINDOW) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  const row = throughput('JetStream async publish (file store)', messages, payload.length, started);
  await manager.streams.delete('BENCH');
  await connection.close();
  return row;
}

/** Redis Streams end to end: XADD paced at `ratePerSecond` for `seconds`, read by XREADGROUP BLOCK on a second connection. */
export async function redisStreamsLatency(
  redisUrl: string,
  ratePerSecond: number,
  seconds: number,
  payload: Uint8Array,
): Promise<LatencyRow> {
  const producer = new Redis(redisUrl);
  const consumer = new Redis(redisUrl);
  const key = 'bench:latency';
  await producer.xgroup('CREATE', key, 'g', '$', 'MKSTREAM');
  const histogram = newHistogram();
  const total = ratePerSecond * seconds;
  let received = 0;
  const reading = (async () => {
    while (received < total) {
      const reply = (await consumer.xreadgroupBuffer(
        'GROUP',
        'g',
        'c',
        'COUNT',
        1000,
        'BLOCK',
        1000,
        'STREAMS',
        key,
        '>',
      )) as [Buffer, [Buffer, Buffer[]][]][] | null;
      if (reply === null) continue;
      const now = performance.now() * 1000;
      const ids: Buffer[] = [];
      for (const [, entries] of reply) {
        for (const [id, fields] of entries) {
          histogram.recordValue(Math.max(1, now - sentAtMicros(fields[1]!)));
          ids.push(id);
          received++;
        }
      }
      await consumer.xack(key, 'g', ...ids);
    }
  })();
  let failure: unknown;
  await paced(ratePerSecond, seconds, () => {
    producer.xadd(key, '*', 'd', Buffer.from(stamped(payload))).catch((error: unknown) => (failure ??= error));
  });
  if (failure !== undefined) throw failure;
  await reading;
  await producer.del(key);
  producer.disconnect();
  consumer.disconnect();
  return latencyRow('Redis Streams: XADD -> XREADGROUP', histogram);
}
