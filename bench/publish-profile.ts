// Where the writer owner's CPU goes per unbatched 1 KiB publish: the profile
// behind the "writer owner alone" row of writer-owner-publish.ts. Starts Redis,
// NATS, a metadata service and a writer owner (each its own process, the
// services with --cpu-prof), publishes over one gRPC Publish stream with
// deduplication on and requests coalesced as the SDK sends them, and charges
// the writer's CPU during the measured stretch to packages
// (cpu-profile-breakdown.ts), then lists the functions with the most self time
// in each package. Also counts, per message, the writer's write and read
// system calls and the commands Redis ran (syscall-counts.ts).
//
// Run: npx tsx bench/publish-profile.ts [--messages 100000] [--warm-up 20000] [--batch 1] [--topics 1] [--frames 5] [--keep <dir>] [--no-profile]
//   --frames N lists the N functions with the most self time of each package (0: none).
//   --keep leaves the profiles in <dir> for a closer look (Chrome DevTools, speedscope).
//   --no-profile runs the writer owner from its bundle, as it ships, and prints only its CPU per message
//   (and the counts, which profiling does not change).
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdminService, TopicsService } from '@ledgerline/proto';
import { closeClient, createClient } from '@ledgerline/rpc';
import { startNats, startRedis } from '@ledgerline/testing';
import { PUBLISH_WINDOW, publishStream, startWriterCluster, stopChildren, waitForOwner } from './baselines';
import { flag } from './bench-report.js';
import { breakdown, breakdownRows, topSelfFrames } from './cpu-profile-breakdown.js';
import { cpuNanos } from './process-cpu.js';
import { fromSources } from './service-bundles.js';
import { commandsBetween, redisCommandCounts, syscallCounts } from './syscall-counts.js';

const MESSAGES = flag('messages', 100_000);
const WARM_UP = flag('warm-up', 20_000);
/** Messages per entry (1: batching off, as the headline row). */
const BATCH = flag('batch', 1);
/** Topics published to at once, one Publish stream each, the window shared as the benchmark's partitioned rows do. */
const TOPICS = flag('topics', 1);
/** Functions listed per package, by self time. */
const FRAMES = flag('frames', 5);
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

/** What the measured stretch gives: its clock window, the writer's CPU, and the counts per message. */
interface Stretch {
  fromMicros: number;
  toMicros: number;
  writerNanos: number;
  syscalls: { writes: number; reads: number };
  commands: [string, number][];
}

/** Publishes MESSAGES with `publishAll`, reading the writer's CPU and system calls and Redis's commands around it. */
async function measureStretch(
  publishAll: (messages: number) => Promise<void>,
  writerPid: number,
  redisUrl: string,
): Promise<Stretch> {
  const commandsBefore = await redisCommandCounts(redisUrl);
  const syscallsBefore = syscallCounts(writerPid);
  const cpuBefore = cpuNanos(writerPid);
  const fromMicros = Number(process.hrtime.bigint() / 1000n);
  await publishAll(MESSAGES);
  const toMicros = Number(process.hrtime.bigint() / 1000n);
  const writerNanos = cpuNanos(writerPid) - cpuBefore;
  const syscallsAfter = syscallCounts(writerPid);
  return {
    fromMicros,
    toMicros,
    writerNanos,
    syscalls: {
      writes: (syscallsAfter.writes - syscallsBefore.writes) / MESSAGES,
      reads: (syscallsAfter.reads - syscallsBefore.reads) / MESSAGES,
    },
    commands: commandsBetween(commandsBefore, await redisCommandCounts(redisUrl)),
  };
}

function printCounts(stretch: Stretch): void {
  const { writes, reads } = stretch.syscalls;
  console.log(
    `writer owner system calls per message: ${writes.toFixed(3)} writes, ${reads.toFixed(3)} reads (every socket and file, every thread)`,
  );
  console.log('Redis commands per message (those a script runs count under their own names):');
  console.table(stretch.commands.map(([command, calls]) => ({ command, 'calls/msg': calls / MESSAGES })));
}

/** The writer's CPU by package over the stretch, then the functions with the most self time in each. */
function printProfile(profile: string, stretch: Stretch, heading: string): void {
  const result = breakdown(profile, stretch.fromMicros, stretch.toMicros);
  console.log(`${heading}, ${(result.busyMicros / MESSAGES).toFixed(1)} µs/msg on its main thread (profiled)`);
  const packages = breakdownRows(result, MESSAGES);
  console.table(packages);
  if (FRAMES <= 0) return;
  const shown = new Set(packages.map((row) => row.package));
  const frames = topSelfFrames(profile, stretch.fromMicros, stretch.toMicros, FRAMES);
  console.log(`The ${FRAMES} functions with the most self time in each package above:`);
  console.table(
    frames
      .filter((frame) => shown.has(frame.package))
      .map((frame) => ({
        package: frame.package,
        function: frame.frame,
        'self µs/msg': Math.round((frame.micros / MESSAGES) * 100) / 100,
      })),
  );
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
  let stretch: Stretch;
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
    stretch = await measureStretch(publishAll, cluster.writer.pid!, redis.url);
  } finally {
    closeClient(topics);
    await stopChildren(cluster.children);
    await nats.stop();
    await redis.stop();
  }
  const seconds = (stretch.toMicros - stretch.fromMicros) / 1e6;
  const cpu = `writer owner CPU ${(stretch.writerNanos / 1000 / MESSAGES).toFixed(1)} µs/msg on every thread`;
  const rate = `${MESSAGES} 1 KiB publishes (${BATCH} per entry, ${TOPICS} topic${TOPICS === 1 ? '' : 's'}) in ${seconds.toFixed(2)} s (${Math.round(MESSAGES / seconds)} msg/s)`;
  printCounts(stretch);
  if (profileDir === undefined) {
    console.log(`${rate}; ${cpu} (${fromSources() ? 'sources through tsx' : 'the bundle, not profiled'})`);
    return;
  }
  printProfile(mainThreadProfile(join(profileDir, 'writer-owner'), cluster.writer.pid), stretch, `${rate}; ${cpu}`);
  if (keepIndex < 0) rmSync(profileDir, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
