// What the writer owner's figures are compared against, run from Node on the
// same machine in the same run: raw pipelined XADD to the ledger Redis,
// JetStream async publish to a nats-server, Redis Streams end-to-end latency
// (XADD -> XREADGROUP) at a fixed rate, a consumer group and JetStream pull
// consumers sharing one stream, and raw SQLite inserts (the embedded limit).
// Shared by the bench scripts, with the process helpers they use to start
// services as in a cluster and the Publish stream they drive.
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import Database from 'better-sqlite3';
import * as hdr from 'hdr-histogram-js';
import { Redis } from 'ioredis';
import { LookupService, TopicsService } from '@ledgerline/proto';
import type { LedgerlineClient } from '@ledgerline/client';
import { closeClient, createClient, type Client } from '@ledgerline/rpc';
import { freePort, waitForPort } from '@ledgerline/testing';
import { appEntry } from './service-bundles.js';

export const ROOT = resolve(__dirname, '..');
export const XADD_BATCH = 100;
export const XADD_IN_FLIGHT = 8;
export const JETSTREAM_WINDOW = 1_000;

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
  latencyMsMax: number;
}

/** Messages and MB per second from startedNs to endedNs (now unless given). */
export function throughput(
  system: string,
  messages: number,
  messageBytes: number,
  startedNs: bigint,
  endedNs = process.hrtime.bigint(),
): ThroughputRow {
  const seconds = Number(endedNs - startedNs) / 1e9;
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
    latencyMsMax: histogram.maxValue / 1000,
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

/**
 * Calls `send` `total` times with at most `window` calls unanswered at once: a new one starts as soon as
 * one is answered (a sliding window, as a producer with that many requests in flight sends), not in
 * rounds that wait for the slowest of each. Rejects with the first failure.
 */
export async function inFlightWindow(total: number, window: number, send: () => Promise<unknown>): Promise<void> {
  let started = 0;
  const lane = async (): Promise<void> => {
    while (started < total) {
      started++;
      await send();
    }
  };
  await Promise.all(Array.from({ length: Math.min(window, total) }, lane));
}

/**
 * `work`'s outcome, or a rejection naming `what` after timeoutMs: a bounded wait that, unlike until(), wakes
 * nothing while it waits, for waits that overlap what a row measures in this process.
 */
export async function within<T>(work: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Resolves once `condition` holds, checking every `intervalMs` (1 by
 * default), or rejects after timeoutMs; answers how long it waited.
 */
export async function until(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
  intervalMs = 1,
): Promise<number> {
  const startedMs = Date.now();
  while (!(await condition())) {
    if (Date.now() - startedMs > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, intervalMs));
  }
  return Date.now() - startedMs;
}

/** Children stopChild was asked to stop: their exit is expected. */
const stopping = new WeakSet<ChildProcess>();
const KEPT_OUTPUT_LINES = 20;

/**
 * A service as its own process (node with tsx's loader), as in a cluster;
 * resolves once its port opens. Its log lines (warn and above) are kept, the
 * last few, and printed if it exits before stopChild stops it, so a row that
 * fails because a service went away says why.
 */
export function startService(app: string, port: number, settings: Record<string, string>): Promise<ChildProcess> {
  return launch(app, appEntry(app), port, {
    ...settings,
    LEDGERLINE_GRPC_PORT: String(port),
    LEDGERLINE_LOG_LEVEL: 'warn',
  });
}

/** A bench script (`bench/<file>.ts`, through tsx) as its own process serving on `port`, given `args`; as startService. */
export function startScript(name: string, file: string, args: readonly string[], port: number): Promise<ChildProcess> {
  return launch(name, ['--import', 'tsx', join(ROOT, 'bench', file), ...args], port, {});
}

/**
 * `ledgerline standalone` as its own process serving on `port`, its data
 * under `dataDir`; as startService. Its console is off: on its fixed port
 * (8080, every address) it took the port of whatever else wanted it on the
 * machine, the pod runner's console Service among them.
 */
export function startStandalone(
  dataDir: string,
  port: number,
  extraArgs: readonly string[] = [],
): Promise<ChildProcess> {
  const argv = [...appEntry('cli'), 'standalone', '--data-dir', dataDir, '--grpc-port', String(port)];
  const quiet = ['--metrics-port', '0', '--console-enabled', 'false', '--log-level', 'warn'];
  return launch('standalone', [...argv, ...quiet, ...extraArgs], port, {});
}

async function launch(
  name: string,
  argv: readonly string[],
  port: number,
  settings: Record<string, string>,
): Promise<ChildProcess> {
  const kept = Object.entries(process.env).filter(([key]) => !key.startsWith('LEDGERLINE_'));
  // BENCH_CPU_PROF=<dir>: every service the bench starts writes V8 CPU profiles (one per thread) under <dir>/<name>.
  const profileDir = process.env['BENCH_CPU_PROF'];
  const profiling = profileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', join(profileDir, name)];
  const child = spawn(process.execPath, [...profiling, ...argv], {
    cwd: ROOT,
    env: { ...Object.fromEntries(kept), ...settings },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // Read, so that a full pipe never stalls the service.
  const lines: string[] = [];
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    lines.push(...chunk.split('\n').filter((line) => line !== ''));
    lines.splice(0, Math.max(0, lines.length - KEPT_OUTPUT_LINES));
  });
  child.once('exit', (code, signal) => {
    if (stopping.has(child)) return;
    console.error(
      `${name} (pid ${child.pid}) exited before it was stopped (${signal ?? `code ${code}`}); its last lines:`,
    );
    for (const line of lines) console.error(`  ${line}`);
  });
  try {
    await waitForPort(port, 120_000);
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  return child;
}

/** SIGTERM, then SIGKILL after a bounded wait: every child this script started, by its handle. */
export async function stopChild(child: ChildProcess): Promise<void> {
  stopping.add(child);
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((done) => setTimeout(done, 15_000))]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** Appends `messages` entries of `payload` to `key` (or spread over several keys), XADD_BATCH per pipeline with XADD_IN_FLIGHT pipelines in flight; returns how many. */
async function xaddPipelined(
  redis: Redis,
  key: string | string[],
  messages: number,
  payload: Uint8Array,
): Promise<number> {
  const keys = typeof key === 'string' ? [key] : key;
  const buffer = Buffer.from(payload);
  let next = 0;
  const batches = Math.ceil(messages / XADD_BATCH);
  const worker = async (): Promise<void> => {
    while (next < batches) {
      next++;
      const pipeline = redis.pipeline();
      // With several streams each pipeline spreads its entries over them, as over a topic's partitions.
      for (let i = 0; i < XADD_BATCH; i++) pipeline.xadd(keys[i % keys.length]!, '*', 'd', buffer);
      const replies = await pipeline.exec();
      const failed = replies?.find(([error]) => error !== null);
      if (failed !== undefined) throw failed[0];
    }
  };
  await Promise.all(Array.from({ length: XADD_IN_FLIGHT }, worker));
  return batches * XADD_BATCH;
}

/** `messages` XADDs of `payload` over `streams` streams, pipelined XADD_BATCH at a time with XADD_IN_FLIGHT pipelines in flight. */
export async function rawXadd(
  redisUrl: string,
  messages: number,
  payload: Uint8Array,
  streams = 1,
  /** Which Redis it is, for the label: the one the row it stands beside uses, by default. */
  redisLabel = 'same Redis',
): Promise<ThroughputRow> {
  const redis = new Redis(redisUrl);
  const keys = Array.from({ length: streams }, (_, i) => `bench:xadd:${i}`);
  const started = process.hrtime.bigint();
  const sent = await xaddPipelined(redis, keys, messages, payload);
  const label = streams === 1 ? '' : `, ${streams} streams`;
  const row = throughput(`raw pipelined XADD (${redisLabel})${label}`, sent, payload.length, started);
  await redis.del(...keys);
  redis.disconnect();
  return row;
}

/** Publishes `messages` of `payload` to `subject` (or spread over several), JETSTREAM_WINDOW awaiting their acks. */
async function jetStreamPublishAll(
  js: JetStreamClient,
  subject: string | string[],
  messages: number,
  payload: Uint8Array,
): Promise<void> {
  const subjects = typeof subject === 'string' ? [subject] : subject;
  const inFlight = new Set<Promise<unknown>>();
  for (let i = 0; i < messages; i++) {
    const publishing = js.publish(subjects[i % subjects.length]!, payload);
    inFlight.add(publishing);
    // A failed publish fails the run at Promise.race / Promise.all below.
    publishing.then(
      () => inFlight.delete(publishing),
      () => inFlight.delete(publishing),
    );
    if (inFlight.size >= JETSTREAM_WINDOW) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
}

/** `messages` JetStream publishes of `payload` over `subjects` subjects (file store), JETSTREAM_WINDOW awaiting their acks. */
export async function jetStreamPublish(
  natsUrl: string,
  messages: number,
  payload: Uint8Array,
  subjects = 1,
): Promise<ThroughputRow> {
  const connection = await connect({ servers: natsUrl });
  const manager = await jetstreamManager(connection);
  await manager.streams.add({ name: 'BENCH', subjects: ['bench.>'] });
  const names = Array.from({ length: subjects }, (_, i) => `bench.publish.${i}`);
  const started = process.hrtime.bigint();
  await jetStreamPublishAll(jetstream(connection), names, messages, payload);
  const label = subjects === 1 ? '' : `, ${subjects} subjects`;
  const row = throughput(`JetStream async publish (file store)${label}`, messages, payload.length, started);
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
  const key = `bench:latency:${ratePerSecond}`;
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
  return latencyRow(`Redis Streams: XADD -> XREADGROUP at ${ratePerSecond} msg/s`, histogram);
}

/** How a consume row reads: a stream that holds every message before the consumers start, or one written while they read. */
export type ConsumeMode = 'backlog' | 'tailing';

/** Entries per XREADGROUP and per JetStream pull: the SDK consumer's default receiver queue (1 000). */
export const CONSUME_READ_COUNT = 1_000;

/**
 * Redis Streams as a Shared subscription: `consumers` connections in one
 * consumer group, each XREADGROUP CONSUME_READ_COUNT at a time and XACK of
 * what it read. 'backlog': the stream holds `messages` entries before the
 * group reads, timed from the first read; 'tailing': one more connection
 * XADDs them (pipelined) while the group reads, timed from the first XADD.
 * Both end at the last XACK.
 */
export async function redisStreamsGroupConsume(
  redisUrl: string,
  mode: ConsumeMode,
  messages: number,
  consumers: number,
  payload: Uint8Array,
): Promise<ThroughputRow> {
  const producer = new Redis(redisUrl);
  const readers = Array.from({ length: consumers }, () => new Redis(redisUrl));
  const key = `bench:group:${mode}`;
  try {
    let total = messages;
    if (mode === 'backlog') {
      total = await xaddPipelined(producer, key, messages, payload);
      await producer.xgroup('CREATE', key, 'g', '0');
    } else {
      await producer.xgroup('CREATE', key, 'g', '$', 'MKSTREAM');
    }
    let acked = 0;
    let finished: bigint | undefined;
    const read = async (reader: Redis, name: string): Promise<void> => {
      while (acked < total) {
        // BLOCK returns at once while the stream has entries for the group; it only waits while tailing.
        const reply = (await reader.xreadgroupBuffer(
          'GROUP',
          'g',
          name,
          'COUNT',
          CONSUME_READ_COUNT,
          'BLOCK',
          100,
          'STREAMS',
          key,
          '>',
        )) as [Buffer, [Buffer, Buffer[]][]][] | null;
        const entries = reply?.[0]?.[1] ?? [];
        if (entries.length === 0) continue;
        await reader.xack(key, 'g', ...entries.map(([id]) => id));
        acked += entries.length;
        if (acked >= total) finished ??= process.hrtime.bigint();
      }
    };
    const started = process.hrtime.bigint();
    const reading = Promise.all(readers.map((reader, i) => read(reader, `c${i}`)));
    if (mode === 'tailing') total = await xaddPipelined(producer, key, messages, payload);
    await reading;
    if (acked !== total) throw new Error(`the consumer group acknowledged ${acked} entries, expected ${total}`);
    return throughput(
      `Redis Streams: XREADGROUP + XACK, ${consumers} consumers in one group, ${mode}`,
      total,
      payload.length,
      started,
      finished,
    );
  } finally {
    await producer.del(key);
    for (const client of [producer, ...readers]) client.disconnect();
  }
}

/**
 * JetStream as a Shared subscription: `consumers` pull subscriptions (one
 * connection each, consume() pulling CONSUME_READ_COUNT at a time) on one
 * durable consumer with explicit acks, on a file-store stream. 'backlog': the
 * stream holds `messages` before they pull, timed from the first pull;
 * 'tailing': another connection publishes them (async, windowed) while they
 * pull, timed from the first publish. Both end once every ack is flushed.
 */
export async function jetStreamPullConsume(
  natsUrl: string,
  mode: ConsumeMode,
  messages: number,
  consumers: number,
  payload: Uint8Array,
): Promise<ThroughputRow> {
  const admin = await connect({ servers: natsUrl });
  const connections = await Promise.all(Array.from({ length: consumers }, () => connect({ servers: natsUrl })));
  const manager = await jetstreamManager(admin);
  const stream = `BENCHCONSUME${mode.toUpperCase()}`;
  const subject = `benchconsume.${mode}`;
  try {
    await manager.streams.add({ name: stream, subjects: [subject] });
    if (mode === 'backlog') await jetStreamPublishAll(jetstream(admin), subject, messages, payload);
    await manager.consumers.add(stream, {
      durable_name: 'shared',
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      // As many unacknowledged as the SDK's consumers may hold: each one's receiver queue.
      max_ack_pending: consumers * CONSUME_READ_COUNT,
    });
    const pulls = async () =>
      Promise.all(
        connections.map(async (connection) =>
          (await jetstream(connection).consumers.get(stream, 'shared')).consume({ max_messages: CONSUME_READ_COUNT }),
        ),
      );
    let started = process.hrtime.bigint();
    const subscriptions = await pulls();
    let received = 0;
    const reading = Promise.all(
      subscriptions.map(async (subscription) => {
        for await (const message of subscription) {
          message.ack();
          if (++received === messages) for (const each of subscriptions) each.stop();
        }
      }),
    );
    if (mode === 'tailing') {
      started = process.hrtime.bigint();
      await jetStreamPublishAll(jetstream(admin), subject, messages, payload);
    }
    await reading;
    await Promise.all(connections.map((connection) => connection.flush()));
    if (received !== messages)
      throw new Error(`the pull consumers received ${received} messages, expected ${messages}`);
    return throughput(
      `JetStream: ${consumers} pull consumers on one durable consumer, ${mode}`,
      messages,
      payload.length,
      started,
    );
  } finally {
    await manager.streams.delete(stream).catch(() => undefined);
    for (const connection of [...connections, admin]) await connection.close();
  }
}

/** The embedded limit: `rows` inserts of `payload` into one SQLite table from this process, `transactionRows` per transaction. */
export function rawSqliteInserts(
  path: string,
  rows: number,
  payload: Uint8Array,
  synchronous: string,
  transactionRows: number,
): { system: string; entriesPerSecond: number; megabytesPerSecond: number } {
  const db = new Database(path);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${synchronous}`);
    db.exec('CREATE TABLE entries (id INTEGER PRIMARY KEY, data BLOB NOT NULL)');
    const insert = db.prepare('INSERT INTO entries (id, data) VALUES (?, ?)');
    const insertBatch = db.transaction((first: number) => {
      for (let i = 0; i < transactionRows; i++) insert.run(first + i, payload);
    });
    const started = process.hrtime.bigint();
    for (let first = 0; first < rows; first += transactionRows) insertBatch(first);
    const row = throughput(
      `raw SQLite inserts, ${transactionRows} rows per transaction (embedded limit)`,
      rows,
      payload.length,
      started,
    );
    return { system: row.system, entriesPerSecond: row.messagesPerSecond, megabytesPerSecond: row.megabytesPerSecond };
  } finally {
    db.close();
  }
}

/** A metadata service and a writer owner, each its own process, as in a cluster. */
export interface WriterCluster {
  metadataAddress: string;
  writerAddress: string;
  writer: ChildProcess;
  /** Every process started, in start order. */
  children: ChildProcess[];
}

/** Starts a metadata service and a writer owner on the given Redis and NATS (key prefixes `<prefix>-meta` and `<prefix>-ledgers`). */
export async function startWriterCluster(redisUrl: string, natsUrl: string, prefix = 'bench'): Promise<WriterCluster> {
  const shared = { LEDGERLINE_REDIS_URL: redisUrl, LEDGERLINE_NATS_URL: natsUrl, LEDGERLINE_METRICS_PORT: '0' };
  const children: ChildProcess[] = [];
  try {
    const metadataPort = await freePort();
    children.push(
      await startService('metadata', metadataPort, { ...shared, LEDGERLINE_REDIS_KEY_PREFIX: `${prefix}-meta` }),
    );
    const metadataAddress = `127.0.0.1:${metadataPort}`;
    const writerPort = await freePort();
    const writerAddress = `127.0.0.1:${writerPort}`;
    const writer = await startService('writer-owner', writerPort, {
      ...shared,
      LEDGERLINE_METADATA_ADDRESS: metadataAddress,
      LEDGERLINE_REDIS_KEY_PREFIX: `${prefix}-ledgers`,
      LEDGERLINE_ADVERTISED_ADDRESS: writerAddress,
    });
    children.push(writer);
    return { metadataAddress, writerAddress, writer, children };
  } catch (error) {
    await stopChildren(children);
    throw error;
  }
}

/** Stops `children` last started first, each by its handle with a bounded wait. */
export async function stopChildren(children: ChildProcess[]): Promise<void> {
  for (const child of [...children].reverse()) await stopChild(child);
}

/**
 * Resolves with the owner address the metadata service's lookup gives for
 * `topic` (in owner group `group`): owners register a moment after their
 * port opens. Checks every 100 ms, for at most a minute.
 */
export async function waitForOwner(metadataAddress: string, topic: string, group?: string): Promise<string> {
  const lookup = createClient(LookupService, metadataAddress);
  try {
    for (let attempt = 0; ; attempt++) {
      const answer = await lookup
        .lookupTopic({ topic, ...(group === undefined ? {} : { group }) })
        .catch(() => undefined);
      if (answer?.advertisedAddress) return answer.advertisedAddress;
      if (attempt > 600)
        throw new Error(`no owner registered for ${topic}${group === undefined ? '' : ` in ${group}`}`);
      await new Promise((done) => setTimeout(done, 100));
    }
  } finally {
    closeClient(lookup);
  }
}

let publishStreams = 0;

/** Messages one Publish stream keeps in flight unless told otherwise. */
export const PUBLISH_WINDOW = 2_000;

/**
 * Entries one coalesced request carries at most, and its payload bytes, as the SDK's producer
 * coalesces (libs/client partition-producer.ts); also bounded by what the server announces.
 */
export const COALESCE_MAX_ENTRIES = 1_000;
const COALESCE_MAX_BYTES = 1024 * 1024;

/**
 * Publishes `count` entries over one gRPC Publish stream (one message each,
 * or `batchSize` messages per entry), `window` messages in flight, or paced by
 * `pace`; `onReceipt` per entry's receipt. Resolves with the number of receipts.
 * With `coalesce`, entries queued when the stream takes its next request share
 * that request (each still its own entry, sequence id and receipt), as the SDK's
 * producer sends them once the server announced it reads several per request;
 * otherwise one entry per request.
 */
export async function publishStream(
  topics: Client<typeof TopicsService>,
  topic: string,
  count: number,
  message: (index: number) => Uint8Array,
  pace?: (send: (index: number) => void) => Promise<number>,
  batchSize = 1,
  onReceipt?: (index: number) => void,
  window = PUBLISH_WINDOW,
  coalesce = true,
): Promise<number> {
  const queue: Uint8Array[] = [];
  let head = 0;
  let maxPerRequest = 1;
  let wake: (() => void) | undefined;
  let queued = 0;
  let answered = 0;
  let done = false;
  const push = (index: number): void => {
    queue.push(message(index));
    queued++;
    wake?.();
  };
  // A producer name per stream: deduplication is on, and sequence ids from 0 again under a name
  // the topic has seen would be answered as duplicates without being stored.
  const producerName = `bench-${process.pid}-${++publishStreams}`;
  let sequenceId = 0n;
  const entry = (payload: Uint8Array) => {
    if (batchSize === 1) return { topic, payload, producerName, sequenceId: sequenceId++ };
    const messages = Array.from({ length: batchSize }, () => ({ payload }));
    const batch = { topic, messages, producerName, sequenceId };
    sequenceId += BigInt(batchSize);
    return batch;
  };
  async function* requests() {
    for (;;) {
      if (head < queue.length) {
        let sizeBytes = queue[head]!.length * batchSize;
        const first = entry(queue[head++]!);
        const more = [];
        const limit = coalesce ? Math.min(maxPerRequest, COALESCE_MAX_ENTRIES) : 1;
        while (
          head < queue.length &&
          more.length + 1 < limit &&
          sizeBytes + queue[head]!.length * batchSize <= COALESCE_MAX_BYTES
        ) {
          sizeBytes += queue[head]!.length * batchSize;
          more.push(entry(queue[head++]!));
        }
        if (head === queue.length) {
          queue.length = 0;
          head = 0;
        }
        yield more.length === 0 ? { message: first } : { message: first, more };
        continue;
      }
      if (done) return;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  }
  const reading = (async () => {
    for await (const response of topics.publish(requests())) {
      maxPerRequest = Math.max(maxPerRequest, response.maxMessagesPerRequest);
      for (const { result } of [response, ...response.more]) {
        if (result.case !== 'receipt') throw new Error(`publish failed: ${result.value?.reason}`);
        if (result.value.duplicate) {
          throw new Error(
            `receipt ${answered} on ${topic} is a duplicate: the row would count a message it did not store`,
          );
        }
        // Receipts come in entry order, so the n-th receipt answers the n-th entry.
        onReceipt?.(answered);
        answered++;
      }
      if (answered >= count) return;
    }
  })();
  // A failed stream ends the sending below and rejects at `await reading`, not as an unhandled
  // rejection that would end the process before the script stops the services it started.
  let failed = false;
  reading.catch(() => (failed = true));
  try {
    if (pace !== undefined) {
      await pace((index) => {
        if (!failed) push(index);
      });
    } else {
      for (let i = 0; i < count && !failed; i++) {
        while (!failed && (queued - answered) * batchSize >= window) await new Promise((r) => setImmediate(r));
        push(i);
      }
    }
    await reading;
  } finally {
    done = true;
    wake?.();
  }
  return answered;
}

/** Sends `count` copies of `payload` through one SDK producer (its own pending limit bounds what is in flight). */
export async function produceWithSdk(
  client: LedgerlineClient,
  topic: string,
  count: number,
  batching: boolean,
  payload: Uint8Array,
): Promise<void> {
  const producer = await client.producer({ topic, ...(batching ? {} : { batching: false }) });
  try {
    const sends: Promise<unknown>[] = [];
    for (let i = 0; i < count; i++) sends.push(producer.send(payload));
    await Promise.all(sends);
  } finally {
    await producer.close();
  }
}
