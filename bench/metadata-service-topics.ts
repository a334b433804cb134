// The metadata service with one big namespace: topics created per second
// (batched CreateTopics over gRPC), the time to list every topic (ListTopics
// pages of 1000 merged across all buckets), the store reads each page cost,
// and the Redis memory each topic takes (INFO memory delta), for 1 and 64
// topic buckets (PIP-157).
//
// Run: npx tsx bench/metadata-service-topics.ts [--full] [--topics N] [--buckets 1,64]
//   Default 100 000 topics per row (about a minute); --full runs 1 000 000.
//   Redis: a throwaway redis-server started here (FLUSHALL between rows), or
//   LEDGERLINE_BENCH_REDIS_URL (flushed too, so never point it at real data).
//   The bus is in-process: NATS publishes are fire-and-forget and do not
//   change these figures. Client, service and Redis share this machine's cores.
import { InProcessBus } from '@ledgerline/bus';
import { startMetadataService } from '@ledgerline/metadata-service';
import { createMetadataStore, type MetadataStore } from '@ledgerline/metadata-store';
import { AdminService } from '@ledgerline/proto';
import { closeClient, createClient, type Client } from '@ledgerline/rpc';
import { serviceConfigSchema } from '@ledgerline/service-kit';
import { startRedis, type ServerProcess } from '@ledgerline/testing';
import { Redis } from 'ioredis';
import { runAlone, sized, type BenchReport } from './bench-report.js';

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}

const TOPICS = Number(argument('--topics') ?? sized({ quick: 20_000, normal: 100_000, full: 1_000_000 }));
const BUCKETS = (argument('--buckets') ?? '1,64').split(',').map(Number);
const BATCH = 1000;
const CALLS_IN_FLIGHT = 4;
const PAGE = 1000;

interface Row {
  buckets: number;
  topics: number;
  createdPerSecond: number;
  listSeconds: number;
  pages: number;
  childrenReadsPerPageMax: number;
  childrenReadsPerPageMean: number;
  redisBytesPerTopic: number;
}

/** Counts the store's children reads, to show what one listing page costs. */
function countingStore(inner: MetadataStore): { store: MetadataStore; childrenReads: () => number } {
  let reads = 0;
  const store = Object.create(inner) as MetadataStore;
  store.children = (path, options) => {
    reads++;
    return inner.children(path, options);
  };
  return { store, childrenReads: () => reads };
}

async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)![1]);
}

/** Pages through the whole namespace, timing it and noting the most store reads one page took. */
async function listEverything(admin: Client<typeof AdminService>, childrenReads: () => number) {
  let pageToken = '';
  let pages = 0;
  let listed = 0;
  let worstPage = 0;
  const started = performance.now();
  const readsAtStart = childrenReads();
  do {
    const readsBefore = childrenReads();
    const page = await admin.listTopics({ namespace: 'bench/topics', pageToken, pageSize: PAGE });
    worstPage = Math.max(worstPage, childrenReads() - readsBefore);
    listed += page.topics.length;
    pages++;
    pageToken = page.nextPageToken;
  } while (pageToken !== '');
  const meanPage = (childrenReads() - readsAtStart) / Math.max(1, pages);
  return { listSeconds: (performance.now() - started) / 1000, pages, listed, worstPage, meanPage };
}

async function runRow(url: string, probe: Redis, buckets: number): Promise<Row> {
  await probe.flushall();
  const bus = new InProcessBus();
  const counted = countingStore(await createMetadataStore({ kind: 'redis', url, bus, keyPrefix: 'bench' }));
  const config = {
    ...serviceConfigSchema.parse({
      grpcHost: '127.0.0.1',
      grpcPort: 0,
      metricsHost: '127.0.0.1',
      metricsPort: 0,
      logLevel: 'warn',
    }),
    reconcileIntervalMs: 3_600_000,
    recountSettleMs: 30_000,
    ownerSweepIntervalMs: 60_000,
  };
  const service = await startMetadataService({ store: counted.store, bus, config, signals: [] });
  const admin = createClient(AdminService, `127.0.0.1:${service.port}`, { defaultDeadlineMs: 120_000 });
  try {
    await admin.createTenant({ tenant: 'bench' });
    await admin.createNamespace({ namespace: 'bench/topics', policies: { numberOfTopicBuckets: buckets } });
    const before = await usedMemory(probe);
    const width = String(TOPICS - 1).length;
    let next = 0;
    const started = performance.now();
    const caller = async () => {
      while (next < TOPICS) {
        const first = next;
        next += BATCH;
        const topics = Array.from(
          { length: Math.min(BATCH, TOPICS - first) },
          (_, i) => `bench/topics/t-${String(first + i).padStart(width, '0')}`,
        );
        const { results } = await admin.createTopics({ topics });
        const failed = results.find((result) => !result.created);
        if (failed !== undefined) throw new Error(`${failed.topic}: ${failed.errorReason} ${failed.errorMessage}`);
      }
    };
    await Promise.all(Array.from({ length: CALLS_IN_FLIGHT }, caller));
    const createSeconds = (performance.now() - started) / 1000;
    const after = await usedMemory(probe);
    const count = (await admin.countTopics({ namespace: 'bench/topics' })).count;
    if (count !== BigInt(TOPICS)) throw new Error(`CountTopics says ${count}, expected ${TOPICS}`);

    const { listSeconds, pages, listed, worstPage, meanPage } = await listEverything(admin, counted.childrenReads);
    if (listed !== TOPICS) throw new Error(`listed ${listed} topics, expected ${TOPICS}`);
    return {
      buckets,
      topics: TOPICS,
      createdPerSecond: Math.round(TOPICS / createSeconds),
      listSeconds: Number(listSeconds.toFixed(2)),
      pages,
      childrenReadsPerPageMax: worstPage,
      childrenReadsPerPageMean: Number(meanPage.toFixed(1)),
      redisBytesPerTopic: Math.round((after - before) / TOPICS),
    };
  } finally {
    closeClient(admin);
    await service.shutdown('benchmark row done');
  }
}

export async function run(): Promise<BenchReport> {
  let server: ServerProcess | undefined;
  const url = process.env['LEDGERLINE_BENCH_REDIS_URL'] ?? (server = await startRedis()).url;
  const probe = new Redis(url);
  const rows: Row[] = [];
  try {
    for (const buckets of BUCKETS) {
      process.stderr.write(`creating ${TOPICS} topics in one namespace with ${buckets} bucket(s)...\n`);
      rows.push(await runRow(url, probe, buckets));
    }
  } finally {
    probe.disconnect();
    await server?.stop();
  }
  return {
    section: 'Topics: create and list one big namespace (PIP-157 buckets)',
    setup: `${TOPICS.toLocaleString('en-US')} topics in one namespace per row (CreateTopics batches of ${BATCH}, ${CALLS_IN_FLIGHT} calls in flight; ListTopics pages of ${PAGE}); metadata service on Redis`,
    tables: [{ title: 'create and list', rows: rows.map((row) => ({ ...row })) }],
    comparisons: [],
  };
}

runAlone(module, run);
