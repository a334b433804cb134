// Garbage-collector figures on Redis (PIP-129 phase 2):
//   1. ledger deletions per second with 1, 2 and 4 collector instances
//      (marked ledgers spread over many managed ledgers; the instances split
//      the index shards between them);
//   2. time from a trim to the trimmed ledger's deletion, p50/p99, with
//      "ledgers deletable" hints and with passes only (gcIntervalMs);
//   3. the cost of a pass over many topics with 1K pending deletions, in
//      metadata reads, beside a full scan of the same store.
// Collectors read the metadata store directly (a cluster collector reads it
// through the metadata service's gRPC API: same calls, one network hop more);
// for the deletion rows each instance is its own process
// (bench/gc-reclaim-worker.ts). Everything shares the machine's cores with
// Redis: compare rows of one run, not absolute numbers across machines.
//
// Run: npx tsx bench/gc-reclaim.ts [--full]
//   Default 10 000 deletions per row and 100 000 topics; --full 40 000 and 1 000 000.
//   Redis: LEDGERLINE_BENCH_REDIS_URL, or a throwaway redis-server started here.
import { create, toBinary } from '@bufbuild/protobuf';
import * as hdr from 'hdr-histogram-js';
import { InProcessBus } from '@ledgerline/bus';
import { GarbageCollector, InProcessCollectorMetadata } from '@ledgerline/garbage-collector';
import { OwnerTag, RedisLedgerStore, type LedgerInfo, type LedgerStore } from '@ledgerline/ledger-store';
import { ManagedLedger, MetadataStoreManagedLedgerMetadata } from '@ledgerline/managed-ledger';
import { createMetadataStore, type MetadataStore } from '@ledgerline/metadata-store';
import { DeletableLedgerSchema, LedgerComponent, ManagedLedgerInfoSchema } from '@ledgerline/proto';
import { join } from 'node:path';
import { startRedis, WorkerProcess, type ServerProcess } from '@ledgerline/testing';
import { full, runAlone, sized, type BenchReport } from './bench-report.js';

interface RedisNames {
  url: string;
  metadataPrefix: string;
  ledgerPrefix: string;
}

const DELETIONS = sized({ quick: 4_000, normal: 10_000, full: 40_000 });
const MARKERS_PER_MANAGED_LEDGER = 50;
const TOPICS = sized({ quick: 20_000, normal: 100_000, full: 1_000_000 });
const PENDING = 1_000;
const TRIMS = sized({ quick: 100, normal: 200, full: 1_000 });
/** Without hints each trim waits up to one interval: fewer of them. */
const PASS_ONLY_TRIMS = sized({ quick: 15, normal: 30, full: 120 });
const INTERVAL_MS = 1_000;
const PUT_CONCURRENCY = 256;

const collectorConfig = {
  gcIntervalMs: 3_600_000,
  indexSettleMs: 0,
  memberTtlMs: 5_000,
  managedLedgerConcurrency: 32,
  deleteConcurrency: 64,
  fullScanIntervalMs: 30 * 24 * 3_600_000,
  fullScanMinGapMs: 0,
};

function collector(store: MetadataStore, ledgerStore: LedgerStore, extra: object = {}): GarbageCollector {
  return new GarbageCollector({
    metadata: new InProcessCollectorMetadata(store, async () => 'missing'),
    ledgerStore,
    config: { ...collectorConfig, ...extra },
  });
}

async function inBatches<T>(items: readonly T[], run: (item: T) => Promise<unknown>): Promise<void> {
  for (let start = 0; start < items.length; start += PUT_CONCURRENCY) {
    await Promise.all(items.slice(start, start + PUT_CONCURRENCY).map(run));
  }
}

/** Creates `count` tagged ledgers and marks them in managed ledgers of MARKERS_PER_MANAGED_LEDGER each (indexed). */
async function markLedgers(
  store: MetadataStore,
  ledgerStore: LedgerStore,
  prefix: string,
  firstId: number,
  count: number,
) {
  const metadata = new MetadataStoreManagedLedgerMetadata(store);
  const groups = Math.ceil(count / MARKERS_PER_MANAGED_LEDGER);
  await inBatches(
    Array.from({ length: groups }, (_, g) => g),
    async (g) => {
      const path = `/managed-ledgers/bench/${prefix}/persistent/m${g}`;
      const ids = Array.from(
        { length: MARKERS_PER_MANAGED_LEDGER },
        (_, i) => firstId + g * MARKERS_PER_MANAGED_LEDGER + i,
      );
      for (const id of ids) {
        await ledgerStore.create(id, {
          ownerTags: { [OwnerTag.managedLedger]: path, [OwnerTag.component]: 'managed-ledger' },
        });
      }
      const info = create(ManagedLedgerInfoSchema, {
        deletableLedgers: ids.map((id) =>
          create(DeletableLedgerSchema, {
            ledgerId: BigInt(id),
            component: LedgerComponent.MANAGED_LEDGER,
            markedAtMs: BigInt(Date.now()),
          }),
        ),
      });
      await metadata.putManagedLedgerInfo(path, info, 'absent');
    },
  );
  return groups * MARKERS_PER_MANAGED_LEDGER;
}

/**
 * Deletions per second with `instances` collector processes (so they do not
 * share one event loop): they join, split the shards, and on "go" run passes
 * until one finds nothing; timed from "go" to the last one done.
 */
async function deletionRow(
  store: MetadataStore,
  ledgerStore: LedgerStore,
  redis: RedisNames,
  instances: number,
  firstId: number,
) {
  const workers = Array.from(
    { length: instances },
    (_, i) =>
      new WorkerProcess(join(__dirname, 'gc-reclaim-worker.ts'), {
        ...redis,
        id: `bench-${instances}-${i}`,
        config: collectorConfig,
      }),
  );
  try {
    for (const worker of workers) await worker.waitFor((lines) => lines.some((l) => 'started' in l), 60_000);
    // Marked only now: the pass each instance runs as it starts must find nothing, so all the work is timed.
    const marked = await markLedgers(store, ledgerStore, `d${instances}`, firstId, DELETIONS);
    // Every member renews within memberTtlMs / 3: wait until each sees all the others.
    await new Promise((resolve) => setTimeout(resolve, collectorConfig.memberTtlMs / 2));
    const started = performance.now();
    for (const worker of workers) worker.send('go');
    for (const worker of workers) await worker.waitFor((lines) => lines.some((l) => 'done' in l), 600_000);
    const seconds = (performance.now() - started) / 1000;
    const deleted = workers.reduce((sum, w) => sum + Number(w.lines.find((l) => 'done' in l)!['done']), 0);
    if (deleted !== marked) throw new Error(`${instances} instance(s): deleted ${deleted} of ${marked}`);
    return {
      instances,
      deleted,
      seconds: Math.round(seconds * 100) / 100,
      deletionsPerSecond: Math.round(deleted / seconds),
    };
  } finally {
    for (const worker of workers) worker.send('stop');
    await Promise.race([
      Promise.all(workers.map((w) => w.exited)),
      new Promise((resolve) => setTimeout(resolve, 10_000)),
    ]);
    for (const worker of workers) await worker.kill();
  }
}

/** The ceiling: info + delete of tagged ledgers straight on the store, 256 in flight, no metadata at all. */
async function rawRow(ledgerStore: LedgerStore, firstId: number) {
  const ids = Array.from({ length: DELETIONS }, (_, i) => firstId + i);
  await inBatches(ids, (id) => ledgerStore.create(id, { ownerTags: { [OwnerTag.managedLedger]: '/raw' } }));
  const started = performance.now();
  await inBatches(ids, async (id) => {
    await ledgerStore.info(id);
    await ledgerStore.delete(id);
  });
  const seconds = (performance.now() - started) / 1000;
  return {
    instances: 'raw store (info + delete, 256 in flight)',
    deleted: DELETIONS,
    seconds: Math.round(seconds * 100) / 100,
    deletionsPerSecond: Math.round(DELETIONS / seconds),
  };
}

/** Records when each ledger was deleted (wall clock, as markers record when they were made). */
class TimedDeletes implements LedgerStore {
  readonly deletedAtMs = new Map<number, number>();
  constructor(private readonly inner: LedgerStore) {}
  async delete(ledgerId: number): Promise<void> {
    await this.inner.delete(ledgerId);
    this.deletedAtMs.set(ledgerId, Date.now());
  }
  /** The collector deletes in batches where the store can: time those too, so the row measures that path. */
  async deleteMany(ledgerIds: readonly number[]): Promise<PromiseSettledResult<void>[]> {
    const results = this.inner.deleteMany
      ? await this.inner.deleteMany(ledgerIds)
      : await Promise.allSettled(ledgerIds.map((id) => this.inner.delete(id)));
    const now = Date.now();
    results.forEach((result, i) => result.status === 'fulfilled' && this.deletedAtMs.set(ledgerIds[i]!, now));
    return results;
  }
  infoMany(ledgerIds: readonly number[]): Promise<PromiseSettledResult<LedgerInfo | undefined>[]> {
    if (this.inner.infoMany) return this.inner.infoMany(ledgerIds);
    return Promise.allSettled(ledgerIds.map((id) => this.inner.info(id)));
  }
  create: LedgerStore['create'] = (id, options) => this.inner.create(id, options);
  fence: LedgerStore['fence'] = (id) => this.inner.fence(id);
  closeLedger: LedgerStore['closeLedger'] = (id) => this.inner.closeLedger(id);
  read: LedgerStore['read'] = (id, first, last) => this.inner.read(id, first, last);
  lastAddConfirmed: LedgerStore['lastAddConfirmed'] = (id) => this.inner.lastAddConfirmed(id);
  info: LedgerStore['info'] = (id) => this.inner.info(id);
  list: LedgerStore['list'] = (options) => this.inner.list(options);
  close: LedgerStore['close'] = () => Promise.resolve();
}

/**
 * Appends and trims one ledger at a time (each append rolls the ledger over)
 * and times each trimmed ledger from its marker (markedAtMs) to its deletion.
 */
async function reclaimRow(
  store: MetadataStore,
  ledgerStore: LedgerStore,
  withHints: boolean,
  topic: string,
  trims: number,
) {
  const bus = new InProcessBus();
  const timed = new TimedDeletes(ledgerStore);
  const gc = new GarbageCollector({
    metadata: new InProcessCollectorMetadata(store, async () => 'missing'),
    ledgerStore: timed,
    ...(withHints ? { bus } : {}),
    config: { ...collectorConfig, gcIntervalMs: INTERVAL_MS, hintDelayMs: 5 },
  });
  await gc.start();
  const ml = await ManagedLedger.open(
    topic,
    { ledgerStore, metadata: new MetadataStoreManagedLedgerMetadata(store), bus },
    {
      config: {
        maxEntriesPerLedger: 1,
        minLedgerAgeMs: 0,
        maintenanceIntervalMs: 0,
        retentionTimeMs: 0,
        retentionSizeBytes: 0,
      },
    },
  );
  const markedAtMs = new Map<number, number>();
  for (let i = 0; i < trims; i++) {
    await ml.append(new Uint8Array(100));
    await ml.trim();
    for (const marker of ml.info().info.deletableLedgers) {
      if (!markedAtMs.has(marker.ledgerId)) markedAtMs.set(marker.ledgerId, marker.markedAtMs);
    }
    // One trim at a time: wait (bounded) for the collector before the next.
    const deadline = Date.now() + 5 * INTERVAL_MS;
    while ([...markedAtMs.keys()].some((id) => !timed.deletedAtMs.has(id)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }
  await ml.close();
  await gc.stop();
  await bus.close();
  const histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000 });
  let missed = 0;
  for (const [id, marked] of markedAtMs) {
    const deleted = timed.deletedAtMs.get(id);
    if (deleted === undefined) missed++;
    else histogram.recordValue(Math.max(1, deleted - marked));
  }
  return {
    path: withHints ? 'hint (ledgers-deletable notification)' : `passes only (every ${INTERVAL_MS} ms)`,
    ledgers: histogram.totalCount,
    notReclaimed: missed,
    reclaimMsP50: histogram.getValueAtPercentile(50),
    reclaimMsP99: histogram.getValueAtPercentile(99),
    reclaimMsMax: histogram.maxValue,
  };
}

async function passCostRows(store: MetadataStore, ledgerStore: LedgerStore) {
  const dirs = [
    '/managed-ledgers',
    '/managed-ledgers/bench',
    '/managed-ledgers/bench/many',
    '/managed-ledgers/bench/many/persistent',
  ];
  for (const dir of dirs) await store.put(dir, new Uint8Array(0)).catch(() => undefined);
  const empty = toBinary(ManagedLedgerInfoSchema, create(ManagedLedgerInfoSchema, {}));
  const started = performance.now();
  await inBatches(
    Array.from({ length: TOPICS }, (_, i) => i),
    (i) => store.put(`/managed-ledgers/bench/many/persistent/t${i}`, empty),
  );
  const writeSeconds = (performance.now() - started) / 1000;
  // 1K pending deletions: one marker in each of 1K of those topics.
  const metadata = new MetadataStoreManagedLedgerMetadata(store);
  await inBatches(
    Array.from({ length: PENDING }, (_, i) => i),
    async (i) => {
      const path = `/managed-ledgers/bench/many/persistent/t${i * Math.floor(TOPICS / PENDING)}`;
      const id = 50_000_000 + i;
      await ledgerStore.create(id, {
        ownerTags: { [OwnerTag.managedLedger]: path, [OwnerTag.component]: 'managed-ledger' },
      });
      const info = create(ManagedLedgerInfoSchema, {
        deletableLedgers: [
          create(DeletableLedgerSchema, { ledgerId: BigInt(id), component: LedgerComponent.MANAGED_LEDGER }),
        ],
      });
      const node = await store.get(path);
      await metadata.putManagedLedgerInfo(path, info, node!.version);
    },
  );
  const gc = collector(store, ledgerStore);
  await store.put('/gc/last-full-scan', new TextEncoder().encode(String(Date.now())));
  const pass = await gc.triggerPass();
  const idle = await gc.triggerPass();
  const rows: object[] = [
    {
      what: `pass, ${TOPICS} topics, ${PENDING} pending`,
      metadataReads: pass.metadataReads,
      readsPerPending: Math.round((pass.metadataReads / PENDING) * 100) / 100,
      ms: Math.round(pass.durationMs),
      deleted: pass.ledgersDeleted,
    },
    {
      what: `pass, ${TOPICS} topics, 0 pending`,
      metadataReads: idle.metadataReads,
      readsPerPending: '-',
      ms: Math.round(idle.durationMs),
      deleted: idle.ledgersDeleted,
    },
  ];
  if (!full) {
    const scan = await gc.triggerPass({ fullScan: true });
    rows.push({
      what: `full scan (backstop), ${TOPICS} topics`,
      metadataReads: scan.metadataReads,
      readsPerPending: '-',
      ms: Math.round(scan.durationMs),
      deleted: 0,
    });
  }
  await gc.stop();
  return { rows, writeSeconds };
}

export async function run(): Promise<BenchReport> {
  let server: ServerProcess | undefined;
  const url = process.env['LEDGERLINE_BENCH_REDIS_URL'] ?? (server = await startRedis()).url;
  const redis: RedisNames = { url, metadataPrefix: `gcbench${Date.now()}`, ledgerPrefix: `gcbench${Date.now()}:` };
  const store = await createMetadataStore({ kind: 'redis', url, keyPrefix: redis.metadataPrefix });
  const ledgerStore = new RedisLedgerStore({ url, keyPrefix: redis.ledgerPrefix });
  try {
    const raw = await rawRow(ledgerStore, 900_000_000);
    const deletions: Record<string, string | number>[] = [raw];
    for (const [index, instances] of [1, 2, 4].entries()) {
      deletions.push(await deletionRow(store, ledgerStore, redis, instances, 1_000_000 * (index + 1)));
    }
    const hinted = await reclaimRow(store, ledgerStore, true, 'persistent://bench/reclaim/hinted', TRIMS);
    const passes = await reclaimRow(store, ledgerStore, false, 'persistent://bench/reclaim/passes', PASS_ONLY_TRIMS);
    const reclaim = [hinted, passes];
    const cost = await passCostRows(store, ledgerStore);
    const one = deletions[1]!;
    return {
      section: 'Garbage collection (PIP-129 phase 2) on Redis',
      setup:
        `${DELETIONS} marked ledgers (${MARKERS_PER_MANAGED_LEDGER} per managed ledger); reclaim delay over ${TRIMS} hinted and ` +
        `${PASS_ONLY_TRIMS} pass-only trims (collector interval ${INTERVAL_MS} ms); pass cost over ${TOPICS} topics with ` +
        `${PENDING} pending deletions (topic nodes written in ${cost.writeSeconds.toFixed(1)} s)`,
      tables: [
        { title: 'ledger deletions per second', rows: deletions },
        { title: "time from a trim (its marker) to the ledger's deletion", rows: reclaim.map((row) => ({ ...row })) },
        { title: 'cost of one pass', rows: cost.rows.map((row) => ({ ...row })) },
      ],
      comparisons: [
        {
          figure: 'GC deletions/s, 1 collector instance',
          unit: 'ledgers/s',
          ours: Number(one['deletionsPerSecond']),
          peer: 'raw ledger-store info + delete',
          peerValue: raw.deletionsPerSecond,
          higherIsBetter: true,
        },
        ...(['reclaimMsP50', 'reclaimMsP99'] as const).map((field) => ({
          figure: `GC reclaim delay ${field === 'reclaimMsP50' ? 'p50' : 'p99'} (trim marker -> ledger deleted), 1 collector instance`,
          unit: 'ms',
          ours: hinted[field],
          peer: `the same collector without hints, ${passes.path}`,
          peerValue: passes[field],
          higherIsBetter: false,
        })),
      ],
    };
  } finally {
    await ledgerStore.close();
    await store.close();
    await server?.stop();
  }
}

runAlone(module, run);
