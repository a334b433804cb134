// Scale-out under the balancer (issues 28 and 43): per row, a local cluster
// (1 metadata instance, 3 writer owners, each its own process, on Redis and
// NATS) with N idle topics spread over the three, plus a light load (4
// producers with deduplication at 25 msg/s each, on topics of their own).
// Then 3 more writer owners start at once, as a Deployment scaled from 3 to 6
// would, and the balancer (default settings) moves topics to them. Prints the
// time from the scale-out to the moment every writer owner holds within ±10%
// of the mean topic count (as the owners report it with their keep-alives,
// every ~2.5 s), the moves the balancer made, and the lost / duplicated counts
// of the load. Issue 43's target: within 60 s, 0 lost, 0 duplicated, for 120
// topics (where placement alone leaves an owner 25% over the mean) and 1,000.
// Read-only owners are balanced by the same planner: a second table scales 3
// read-only owners to 6 with N reader topics (PIP-63), each loaded by a
// lookup and idle, against the same ±10% band. Every process shares the
// machine's cores.
//
// Run: npx tsx bench/balancer-scale-out.ts [--topics 120,1000] [--readonly-topics 120,1000] [--transfer-concurrency 16]
// (0 for either list leaves its table out)
import { createClient, type LedgerlineClient } from '@ledgerline/client';
import { LocalCluster, READ_ONLY_GROUP } from '@ledgerline/cluster';
import { ClusterClients, LatencyLoad } from '@ledgerline/cluster-harness';
import { OwnerRole } from '@ledgerline/proto';
import { loadavg } from 'node:os';
import { flag, runAlone, type BenchReport } from './bench-report.js';

const TOPIC_COUNTS = (
  process.argv.includes('--topics') ? process.argv[process.argv.indexOf('--topics') + 1]! : '120,1000'
)
  .split(',')
  .filter((each) => each !== '' && each !== '0')
  .map(Number);
const READONLY_TOPIC_COUNTS = (
  process.argv.includes('--readonly-topics') ? process.argv[process.argv.indexOf('--readonly-topics') + 1]! : '120,1000'
)
  .split(',')
  .filter((each) => each !== '' && each !== '0')
  .map(Number);
/** LEDGERLINE_BALANCER_TRANSFER_CONCURRENCY; the default's when not given. */
const TRANSFER_CONCURRENCY = flag('transfer-concurrency', 0);
const WRITERS_BEFORE = 3;
const WRITERS_AFTER = 6;
const LOADS = 4;
const MESSAGES_PER_SECOND_EACH = 25;
const SPREAD = 0.1;
const TARGET_MS = 60_000;
/** How long the scale-out may take before the bench gives up (it reports the spread it reached). */
const GIVE_UP_MS = 240_000;
const POLL_MS = 250;
const LOAD_CONCURRENCY = 16;

async function forEachBounded<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/** Topics each live owner of the role reports owning. */
async function ownedCounts(clients: ClusterClients, role = OwnerRole.WRITER): Promise<number[]> {
  const group = role === OwnerRole.READONLY ? READ_ONLY_GROUP : '';
  const { owners } = await clients.lookup.listOwners({ group, role });
  return owners.map((owner) => owner.load?.topicsOwned ?? 0);
}

function withinSpread(counts: number[], owners: number, total: number): boolean {
  const sum = counts.reduce((all, count) => all + count, 0);
  const mean = sum / Math.max(1, counts.length);
  return counts.length === owners && sum === total && counts.every((count) => Math.abs(count - mean) <= SPREAD * mean);
}

async function waitUntil(condition: () => Promise<boolean>, timeoutMs: number): Promise<number | undefined> {
  const startedMs = Date.now();
  while (Date.now() - startedMs < timeoutMs) {
    if (await condition()) return Date.now() - startedMs;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return undefined;
}

/** The counts before and after a scale-out, and how long the owners took to come within the band. */
function spreadFigures(before: number[], after: number[], servingMs: number, settledMs: number | undefined) {
  const mean = after.reduce((sum, count) => sum + count, 0) / after.length;
  return {
    'counts before': before.join(' '),
    'counts after': after.join(' '),
    'max off the mean %': Math.round((Math.max(...after.map((count) => Math.abs(count - mean))) / mean) * 100),
    'new owners serving ms': servingMs,
    'scale-out→within ±10% ms': settledMs === undefined ? `not within ${GIVE_UP_MS} ms` : servingMs + settledMs,
  };
}

async function spreadTopics(cluster: LocalCluster, clients: ClusterClients, topicCount: number): Promise<void> {
  await clients.createRetainedNamespace('scale/ns');
  const names = Array.from({ length: topicCount }, (_, i) => `persistent://scale/ns/t${i}`);
  for (let i = 0; i < names.length; i += 100) await clients.admin.createTopics({ topics: names.slice(i, i + 100) });
  const sdk: LedgerlineClient = createClient({ serviceUrl: cluster.metadataTarget });
  try {
    // Asking a topic's owner for its stats loads it there (placed among the live owners) and leases it.
    await forEachBounded(names, LOAD_CONCURRENCY, async (topic) => {
      await sdk.topicStats(topic);
    });
  } finally {
    await sdk.close();
  }
}

async function scaleOutRow(topicCount: number) {
  const metadata: Record<string, string> =
    TRANSFER_CONCURRENCY > 0 ? { LEDGERLINE_BALANCER_TRANSFER_CONCURRENCY: String(TRANSFER_CONCURRENCY) } : {};
  const cluster = await LocalCluster.start({
    counts: { metadata: 1, 'writer-owner': WRITERS_BEFORE },
    settings: { metadata },
  });
  const clients = new ClusterClients(cluster);
  const loads: LatencyLoad[] = [];
  try {
    await spreadTopics(cluster, clients, topicCount);
    for (let i = 0; i < LOADS; i++)
      loads.push(await LatencyLoad.start(cluster, `scale-load${i}`, MESSAGES_PER_SECOND_EACH));
    const total = topicCount + LOADS;
    const settledBefore = await waitUntil(
      async () => (await ownedCounts(clients)).reduce((sum, count) => sum + count, 0) === total,
      60_000,
    );
    if (settledBefore === undefined)
      throw new Error(`the ${WRITERS_BEFORE} writer owners never reported ${total} topics`);
    const before = await ownedCounts(clients);
    const statusBefore = await clients.admin.getBalancerStatus({});
    const startedMs = Date.now();
    await Promise.all(Array.from({ length: WRITERS_AFTER - WRITERS_BEFORE }, () => cluster.add('writer-owner')));
    const servingMs = Date.now() - startedMs;
    const settledMs = await waitUntil(
      async () => withinSpread(await ownedCounts(clients), WRITERS_AFTER, total),
      GIVE_UP_MS - servingMs,
    );
    const after = await ownedCounts(clients);
    for (const load of loads) await load.stop();
    const problems = (await Promise.all(loads.map((load) => load.check()))).flat();
    const status = await clients.admin.getBalancerStatus({});
    const moves = Number(status.movesTotal) - Number(statusBefore.movesTotal);
    return {
      topics: total,
      ...spreadFigures(before, after, servingMs, settledMs),
      'balancer rounds': Number(status.rounds) - Number(statusBefore.rounds),
      'balancer moves': moves,
      'transfer concurrency': TRANSFER_CONCURRENCY > 0 ? TRANSFER_CONCURRENCY : 'default',
      'moves failed': status.recentMoves.filter((move) => move.outcome !== 'moved').length,
      acknowledged: loads.reduce((sum, load) => sum + load.acks.length, 0),
      'sends failed': loads.reduce((sum, load) => sum + load.failures.length, 0),
      lost: problems.filter((problem) => problem.endsWith('and lost')).length,
      duplicated: problems.filter((problem) => problem.includes('stored twice')).length,
      'other problems': problems.filter((p) => !p.endsWith('and lost') && !p.includes('stored twice')).length,
      'load avg': Number(loadavg()[0]!.toFixed(2)),
    };
  } finally {
    for (const load of loads) await load.close().catch(() => undefined);
    clients.close();
    await cluster.stop();
  }
}

/** 3 read-only owners holding N idle reader topics, then 6. */
async function readOnlyScaleOutRow(topicCount: number) {
  const cluster = await LocalCluster.start({
    counts: { metadata: 1, 'writer-owner': 1, 'readonly-owner': WRITERS_BEFORE },
  });
  const clients = new ClusterClients(cluster);
  const sdk: LedgerlineClient = createClient({ serviceUrl: cluster.metadataTarget });
  try {
    await clients.createRetainedNamespace('scale/writer');
    await clients.admin.createNamespace({ namespace: 'scale/reader', policies: { ownerGroup: READ_ONLY_GROUP } });
    await clients.admin.setWriterNamespace({ namespace: 'scale/reader', writerNamespace: 'scale/writer' });
    const locals = Array.from({ length: topicCount }, (_, i) => `t${i}`);
    for (let i = 0; i < locals.length; i += 100)
      await clients.admin.createTopics({
        topics: locals.slice(i, i + 100).map((l) => `persistent://scale/writer/${l}`),
      });
    // Asking a reader topic's owner for its stats loads it there (placed among the live read-only owners).
    await forEachBounded(locals, LOAD_CONCURRENCY, async (local) => {
      await sdk.topicStats(`persistent://scale/reader/${local}`);
    });
    const counts = () => ownedCounts(clients, OwnerRole.READONLY);
    const settledBefore = await waitUntil(
      async () => (await counts()).reduce((sum, count) => sum + count, 0) === topicCount,
      60_000,
    );
    if (settledBefore === undefined) throw new Error(`the read-only owners never reported ${topicCount} topics`);
    const before = await counts();
    const statusBefore = await clients.admin.getBalancerStatus({});
    const startedMs = Date.now();
    await Promise.all(Array.from({ length: WRITERS_AFTER - WRITERS_BEFORE }, () => cluster.add('readonly-owner')));
    const servingMs = Date.now() - startedMs;
    const settledMs = await waitUntil(
      async () => withinSpread(await counts(), WRITERS_AFTER, topicCount),
      GIVE_UP_MS - servingMs,
    );
    const after = await counts();
    const status = await clients.admin.getBalancerStatus({});
    return {
      topics: topicCount,
      ...spreadFigures(before, after, servingMs, settledMs),
      'balancer moves': Number(status.movesTotal) - Number(statusBefore.movesTotal),
      'moves failed': status.recentMoves.filter((move) => move.outcome !== 'moved').length,
      'load avg': Number(loadavg()[0]!.toFixed(2)),
    };
  } finally {
    await sdk.close().catch(() => undefined);
    clients.close();
    await cluster.stop();
  }
}

export async function run(): Promise<BenchReport> {
  const rows = [];
  for (const topicCount of TOPIC_COUNTS) rows.push(await scaleOutRow(topicCount));
  const readOnlyRows = [];
  for (const topicCount of READONLY_TOPIC_COUNTS) readOnlyRows.push(await readOnlyScaleOutRow(topicCount));
  return {
    section: 'Balancer: writer owners scaled from 3 to 6 under light load',
    setup:
      `per row, 1 metadata instance and ${WRITERS_BEFORE} writer owners (each its own process, Redis and NATS), ` +
      `N idle topics plus ${LOADS} producers with deduplication at ${MESSAGES_PER_SECOND_EACH} msg/s each; ` +
      `${WRITERS_AFTER - WRITERS_BEFORE} writer owners started at once; balancer settings at their defaults ` +
      `(docs/placement.md); target: every owner within ±${SPREAD * 100}% of the mean topic count within ` +
      `${TARGET_MS / 1000} s, 0 lost, 0 duplicated`,
    tables: [
      ...(rows.length > 0 ? [{ title: 'scale-out', rows }] : []),
      ...(readOnlyRows.length > 0
        ? [{ title: 'read-only owners scaled from 3 to 6, idle reader topics', rows: readOnlyRows }]
        : []),
    ],
    comparisons: [],
  };
}

runAlone(module, run);
