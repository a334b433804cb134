// Where the writer owner's CPU goes per unbatched 1 KiB publish: the profile
// behind the "writer owner alone" row of writer-owner-publish.ts. Starts Redis,
// NATS, a metadata service and a writer owner (each its own process, the
// services with --cpu-prof), publishes over one gRPC Publish stream with
// deduplication on and requests coalesced as the SDK sends them, and charges
// the writer's CPU during the measured stretch to packages
// (cpu-profile-breakdown.ts).
//
// Run: npx tsx bench/publish-profile.ts [--messages 100000] [--warm-up 20000] [--batch 1] [--topics 1] [--keep <dir>] [--no-profile]
//   --keep leaves the profiles in <dir> for a closer look (Chrome DevTools, speedscope).
//   --no-profile runs the writer owner from its bundle, as it ships, and prints only its CPU per message.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdminService, TopicsService } from '@ledgerline/proto';
import { closeClient, createClient } from '@ledgerline/rpc';
import { startNats, startRedis } from '@ledgerline/testing';
import { PUBLISH_WINDOW, publishStream, startWriterCluster, stopChildren, waitForOwner } from './baselines';
import { flag } from './bench-report.js';
import { breakdown, breakdownRows } from './cpu-profile-breakdown.js';
import { cpuNanos } from './process-cpu.js';
import { fromSources } from './service-bundles.js';

const MESSAGES = flag('messages', 100_000);
const WARM_UP = flag('warm-up', 20_000);
/** Messages per entry (1: batching off, as the headline row). */
const BATCH = flag('batch', 1);
/** Topics published to at once, one Publish stream each, the window shared as the benchmark's partitioned rows do. */
const TOPICS = flag('topics', 1);
/** --no-profile: the writer owner runs from its bundle, unprofiled, and only its CPU per message is printed. */
const PROFILED = !process.argv.includes('--no-profile');
const payload = new Uint8Array(1024).map((_, i) => (i * 7) & 0xff);

/** The main thread's profile of process `pid` under `dir`: its largest (worker threads write small ones beside it). */
function mainThreadProfile(dir: string, pid: number | undefined): string {
  const files = readdirSync(dir)
    .filter((name) => name.split('.')[3] === String(pid))
    .map((name) => join(dir, name));
  return files.sort((a, b) => statSync(b).size - statSync(a).size)[0]!;
}

/** Where the profiles go: --keep's folder, or a temporary one; none with --no-profile. */
function profileFolder(keepIndex: number): string | undefined {
  if (!PROFILED) return undefined;
  return keepIndex > 0 ? process.argv[keepIndex + 1]! : mkdtempSync(join(tmpdir(), 'publish-profile-'));
}

async function main(): Promise<void> {
  const keepIndex = process.argv.indexOf('--keep');
  const profileDir = profileFolder(keepIndex);
  // Profiled, the services run from their sources (service-bundles.ts); without, from the bundles that ship.
  if (profileDir !== undefined) process.env['BENCH_CPU_PROF'] = profileDir;
  const redis = await startRedis();
  const nats = await startNats();
  const cluster = await startWriterCluster(redis.url, nats.url, 'profile');
  const topics = createClient(TopicsService, cluster.writerAddress);
  const names = Array.from({ length: TOPICS }, (_, i) => `persistent://bench/ns/profile-${i}`);
  const window = Math.max(BATCH, Math.floor(PUBLISH_WINDOW / TOPICS));
  const publishAll = async (messages: number): Promise<void> => {
    const perTopic = Math.ceil(messages / TOPICS / BATCH);
    await Promise.all(
      names.map((name) => publishStream(topics, name, perTopic, () => payload, undefined, BATCH, undefined, window)),
    );
  };
  let fromMicros = 0;
  let toMicros = 0;
  let writerNanos = 0;
  try {
    const admin = createClient(AdminService, cluster.metadataAddress);
    try {
      await admin.createTenant({ tenant: 'bench' });
      await admin.createNamespace({ namespace: 'bench/ns', policies: { retentionTimeMinutes: 60n } });
      for (const topic of names) await admin.createTopic({ topic });
    } finally {
      closeClient(admin);
    }
    for (const topic of names) await waitForOwner(cluster.metadataAddress, topic);
    await publishAll(WARM_UP);
    const before = cpuNanos(cluster.writer.pid);
    fromMicros = Number(process.hrtime.bigint() / 1000n);
    await publishAll(MESSAGES);
    toMicros = Number(process.hrtime.bigint() / 1000n);
    writerNanos = cpuNanos(cluster.writer.pid) - before;
  } finally {
    closeClient(topics);
    await stopChildren(cluster.children);
    await nats.stop();
    await redis.stop();
  }
  const seconds = (toMicros - fromMicros) / 1e6;
  const cpu = `writer owner CPU ${(writerNanos / 1000 / MESSAGES).toFixed(1)} µs/msg on every thread`;
  const rate = `${MESSAGES} 1 KiB publishes (${BATCH} per entry, ${TOPICS} topic${TOPICS === 1 ? '' : 's'}) in ${seconds.toFixed(2)} s (${Math.round(MESSAGES / seconds)} msg/s)`;
  if (profileDir === undefined) {
    console.log(`${rate}; ${cpu} (${fromSources() ? 'sources through tsx' : 'the bundle, not profiled'})`);
    return;
  }
  const result = breakdown(
    mainThreadProfile(join(profileDir, 'writer-owner'), cluster.writer.pid),
    fromMicros,
    toMicros,
  );
  console.log(`${rate}; ${cpu}, ${(result.busyMicros / MESSAGES).toFixed(1)} µs/msg on its main thread (profiled)`);
  console.table(breakdownRows(result, MESSAGES));
  if (keepIndex < 0) rmSync(profileDir, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
