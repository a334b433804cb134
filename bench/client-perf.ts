// `ledgerline perf` as a user runs it, beside the baselines a Redis-backed log
// is compared against, in one run on one machine (issue 13's benchmark):
//
//   against a cluster (metadata service + writer owner processes over a
//   throwaway redis-server and nats-server) and against `ledgerline standalone`:
//     - perf produce, 1 KiB, as fast as receipts allow, batching off and on
//     - perf e2e, 1 KiB at a fixed 10K msg/s (send -> consumer delivery)
//   baselines, from Node to the same servers:
//     - raw pipelined XADD and JetStream async publish (throughput)
//     - Redis Streams XADD -> XREADGROUP at 10K msg/s (latency)
//
// Each perf row is the CLI in its own process (`node --import tsx
// apps/cli/src/main.ts perf ... --json`), its summary line parsed. Client and
// servers share the machine's cores, so compare the rows of one run; the load
// average is printed before and after.
//
// Run: npx tsx bench/client-perf.ts [--seconds N] [--no-standalone]
//   N seconds per perf row (default 10); baselines send as many messages as
//   the batched-off produce row stored, at least 20 000.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { AdminService, LookupService } from '@ledgerline/proto';
import { closeClient, createClient } from '@ledgerline/rpc';
import { freePort, startNats, startRedis } from '@ledgerline/testing';
import {
  ROOT,
  jetStreamPublish,
  rawXadd,
  redisStreamsLatency,
  startService,
  startStandalone,
  stopChild,
  type LatencyRow,
  type ThroughputRow,
} from './baselines';
import { appEntry } from './service-bundles.js';

const argument = (name: string): string | undefined => {
  const at = process.argv.indexOf(name);
  return at < 0 ? undefined : process.argv[at + 1];
};
const SECONDS = Number(argument('--seconds') ?? 10);
const WITH_STANDALONE = !process.argv.includes('--no-standalone');
const MESSAGE_BYTES = 1024;
const E2E_RATE = 10_000;
const MIN_BASELINE_MESSAGES = 20_000;
const payload = new Uint8Array(MESSAGE_BYTES).map((_, i) => (i * 7) & 0xff);

interface PerfSummary {
  type: string;
  messages: number;
  msgPerSecond: number;
  mbPerSecond: number;
  errors: number;
  latencyMs: { p50: number; p99: number; p999: number; max: number };
}

interface PerfRow {
  target: string;
  run: string;
  messages: number;
  msgPerSecond: number;
  mbPerSecond: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
}

function load(): string {
  return `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')} (1/5/15 min) on ${cpus().length} cores`;
}

/** Runs the CLI with `args` and resolves with the summary line of its --json output. */
function perf(url: string, args: readonly string[]): Promise<PerfSummary> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...appEntry('cli'), '--url', url, 'perf', ...args, '--json'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), (SECONDS + 120) * 1000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const lines = output.trim().split('\n');
      const summary = lines
        .map((line) => {
          try {
            return JSON.parse(line) as PerfSummary;
          } catch {
            return undefined;
          }
        })
        .find((report) => report?.type === 'summary');
      if (code !== 0 || summary === undefined) reject(new Error(`perf ${args.join(' ')} exited ${code}: ${output}`));
      else resolve(summary);
    });
  });
}

function row(target: string, run: string, summary: PerfSummary): PerfRow {
  return {
    target,
    run,
    messages: summary.messages,
    msgPerSecond: Math.round(summary.msgPerSecond),
    mbPerSecond: summary.mbPerSecond,
    errors: summary.errors,
    p50Ms: summary.latencyMs.p50,
    p99Ms: summary.latencyMs.p99,
    p999Ms: summary.latencyMs.p999,
    maxMs: summary.latencyMs.max,
  };
}

/** The three perf runs against one service URL, each on a topic of its own. */
async function perfRuns(target: string, url: string, topics: (name: string) => string): Promise<PerfRow[]> {
  const common = ['--size', String(MESSAGE_BYTES), '--duration', String(SECONDS)];
  const rows: PerfRow[] = [];
  const unbatched = await perf(url, ['produce', topics('produce-unbatched'), ...common, '--batch-max-messages', '0']);
  rows.push(row(target, 'perf produce, batching off', unbatched));
  const batched = await perf(url, ['produce', topics('produce-batched'), ...common]);
  rows.push(row(target, 'perf produce, batching on (1000 msgs / 1 ms)', batched));
  const e2e = await perf(url, ['e2e', topics('e2e'), ...common, '--rate', String(E2E_RATE)]);
  rows.push(row(target, `perf e2e at ${E2E_RATE} msg/s (batching on)`, e2e));
  return rows;
}

async function createTopics(adminAddress: string, names: readonly string[]): Promise<void> {
  const admin = createClient(AdminService, adminAddress);
  try {
    await admin.createTenant({ tenant: 'perf' });
    // Retention by time, as a bench topic would have: no subscription holds produce runs' entries.
    await admin.createNamespace({ namespace: 'perf/ns', policies: { retentionTimeMinutes: 60n } });
    for (const name of names) await admin.createTopic({ topic: `persistent://perf/ns/${name}` });
  } finally {
    closeClient(admin);
  }
}

const TOPICS = ['produce-unbatched', 'produce-batched', 'e2e'];
const topicName = (name: string): string => `persistent://perf/ns/${name}`;

async function clusterRows(redisUrl: string, natsUrl: string, children: ChildProcess[]): Promise<PerfRow[]> {
  const metadataPort = await freePort();
  children.push(
    await startService('metadata', metadataPort, {
      LEDGERLINE_REDIS_URL: redisUrl,
      LEDGERLINE_NATS_URL: natsUrl,
      LEDGERLINE_REDIS_KEY_PREFIX: 'perf-meta',
      LEDGERLINE_METRICS_PORT: '0',
    }),
  );
  const writerPort = await freePort();
  children.push(
    await startService('writer-owner', writerPort, {
      LEDGERLINE_METADATA_ADDRESS: `127.0.0.1:${metadataPort}`,
      LEDGERLINE_REDIS_URL: redisUrl,
      LEDGERLINE_NATS_URL: natsUrl,
      LEDGERLINE_REDIS_KEY_PREFIX: 'perf-ledgers',
      LEDGERLINE_ADVERTISED_ADDRESS: `127.0.0.1:${writerPort}`,
      LEDGERLINE_METRICS_PORT: '0',
    }),
  );
  const metadata = `127.0.0.1:${metadataPort}`;
  await createTopics(metadata, TOPICS);
  // The writer registers a moment after its port opens: wait (bounded) until the lookup names it.
  const lookup = createClient(LookupService, metadata);
  try {
    for (let attempt = 0; ; attempt++) {
      const answer = await lookup.lookupTopic({ topic: topicName('e2e') }).catch(() => undefined);
      if (answer?.advertisedAddress === `127.0.0.1:${writerPort}`) break;
      if (attempt > 600) throw new Error('the writer owner never registered');
      await new Promise((done) => setTimeout(done, 100));
    }
  } finally {
    closeClient(lookup);
  }
  return perfRuns('cluster (Redis + NATS)', metadata, topicName);
}

async function standaloneRows(children: ChildProcess[]): Promise<PerfRow[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'ledgerline-perf-'));
  try {
    const port = await freePort();
    const child = await startStandalone(dataDir, port);
    children.push(child);
    await createTopics(`127.0.0.1:${port}`, TOPICS);
    const rows = await perfRuns('standalone (SQLite)', `127.0.0.1:${port}`, topicName);
    await stopChild(child);
    return rows;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function ratio(a: number, b: number): string {
  return b === 0 ? 'n/a' : (a / b).toFixed(2);
}

async function main(): Promise<void> {
  const loadBefore = load();
  const redis = await startRedis();
  const nats = await startNats();
  const children: ChildProcess[] = [];
  try {
    const rows = await clusterRows(redis.url, nats.url, children);
    for (const child of children.splice(0).reverse()) await stopChild(child);
    if (WITH_STANDALONE) rows.push(...(await standaloneRows(children)));
    const baselineMessages = Math.max(MIN_BASELINE_MESSAGES, rows[0]!.messages);
    const baselines: ThroughputRow[] = [
      await rawXadd(redis.url, baselineMessages, payload),
      await jetStreamPublish(nats.url, Math.min(baselineMessages, 50_000), payload),
    ];
    const latency: LatencyRow = await redisStreamsLatency(redis.url, E2E_RATE, SECONDS, payload);
    const loadAfter = load();

    console.log(`\n1 KiB messages, ${SECONDS} s per perf run; e2e paced at ${E2E_RATE} msg/s`);
    console.table(rows);
    console.table([...baselines, latency]);
    const [xadd, js] = baselines;
    console.log(
      'ratios (issue 12 targets: produce >= 0.5x raw XADD and >= 2x JetStream; e2e p99 <= 2x Redis Streams):',
    );
    for (const r of rows) {
      if (r.run.startsWith('perf produce')) {
        console.log(
          `  ${r.target}, ${r.run}: / raw XADD = ${ratio(r.msgPerSecond, xadd!.messagesPerSecond)}, ` +
            `/ JetStream = ${ratio(r.msgPerSecond, js!.messagesPerSecond)}`,
        );
      } else {
        console.log(
          `  ${r.target}, ${r.run}: p99 / Redis Streams p99 = ${ratio(r.p99Ms, latency.latencyMsP99)} ` +
            `(${r.p99Ms} ms vs ${latency.latencyMsP99} ms)`,
        );
      }
    }
    console.log(`before: ${loadBefore}\nafter:  ${loadAfter}`);
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
