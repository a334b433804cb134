// Metadata store throughput: puts (create), compare-and-set puts, gets and
// children pages per second per backend, with many callers in flight (as the
// metadata service has), printed beside raw pipelined XADD of 1 KiB to the
// same Redis from the same process, the limit a Redis-backed store is compared
// against. Client and Redis share the machine's cores, so compare the rows of
// one run rather than absolute numbers across machines.
//
// Run: npx tsx bench/metadata-store-ops.ts [--full] [--cluster]
//   Default 20 000 operations per row (about half a minute); --full runs 100 000.
//   --cluster adds rows for a 3-master Redis Cluster (started here, about 5 s).
//   Redis: LEDGERLINE_BENCH_REDIS_URL, or a throwaway redis-server started here.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as hdr from 'hdr-histogram-js';
import { Redis } from 'ioredis';
import { InProcessBus } from '@ledgerline/bus';
import { createMetadataStore, type MetadataStore } from '@ledgerline/metadata-store';
import { startRedis, startRedisCluster, type RedisClusterProcess, type ServerProcess } from '@ledgerline/testing';

const full = process.argv.includes('--full');
const withCluster = process.argv.includes('--cluster');
const OPERATIONS = full ? 100_000 : 20_000;
const IN_FLIGHT = 64;
const VALUE_BYTES = 1024;
const PAGE = 1000;
const value = new Uint8Array(VALUE_BYTES).map((_, i) => (i * 13) & 0xff);

interface Row {
  backend: string;
  operation: string;
  opsPerSecond: number;
  latencyMsP50: number;
  latencyMsP99: number;
}

/** Runs `count` operations with `inFlight` callers, timing each one. */
async function measure(
  backend: string,
  operation: string,
  count: number,
  run: (index: number) => Promise<unknown>,
  inFlight = IN_FLIGHT,
): Promise<Row> {
  const histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000 });
  let next = 0;
  const caller = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      const started = process.hrtime.bigint();
      await run(index);
      histogram.recordValue(Number((process.hrtime.bigint() - started) / 1000n));
    }
  };
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: inFlight }, caller));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return {
    backend,
    operation,
    opsPerSecond: Math.round(count / seconds),
    latencyMsP50: histogram.getValueAtPercentile(50) / 1000,
    latencyMsP99: histogram.getValueAtPercentile(99) / 1000,
  };
}

/** Creates OPERATIONS nodes under one parent, overwrites them with CAS, reads them, then pages the parent. */
async function storeRows(backend: string, store: MetadataStore): Promise<Row[]> {
  const root = `/bench-${process.pid}-${Date.now()}`;
  const name = (i: number) => `node-${String(i).padStart(7, '0')}`;
  const path = (i: number) => `${root}/${name(i)}`;
  await store.put(`${root}/warm-up`, value);
  const put = await measure(backend, 'put (create)', OPERATIONS, (i) => store.put(path(i), value));
  const cas = await measure(backend, 'put (expectedVersion)', OPERATIONS, (i) =>
    store.put(path(i), value, { expectedVersion: 1 }),
  );
  const get = await measure(backend, 'get', OPERATIONS, async (i) => {
    if ((await store.get(path(i)))?.version !== 2) throw new Error(`${backend}: ${path(i)} is not at version 2`);
  });
  const pages = Math.ceil(OPERATIONS / PAGE);
  // Listing is sequential by nature (each page starts after the last), so one caller pages through.
  const children = await measure(
    backend,
    `children (page of ${PAGE})`,
    pages,
    (i) => store.children(root, i === 0 ? { limit: PAGE } : { after: name(i * PAGE - 1), limit: PAGE }),
    1,
  );
  return [put, cas, get, children];
}

/** The baseline: pipelines of 100 XADDs of 1 KiB, 8 pipelines in flight on one connection, counted per XADD. */
async function xaddRow(url: string): Promise<Row> {
  const client = new Redis(url);
  const stream = `bench:meta-xadd:${process.pid}`;
  const bytes = Buffer.from(value);
  const perPipeline = 100;
  try {
    const xadds = async () => {
      const pipeline = client.pipeline();
      for (let i = 0; i < perPipeline; i++) pipeline.xadd(stream, '*', 'd', bytes);
      const replies = await pipeline.exec();
      if (replies?.some(([error]) => error)) throw new Error('XADD failed');
    };
    const row = await measure('redis (raw)', 'XADD 1 KiB pipelined x100', OPERATIONS / perPipeline, xadds, 8);
    // Latency stays per pipeline of 100; throughput is per XADD.
    return { ...row, opsPerSecond: row.opsPerSecond * perPipeline };
  } finally {
    await client.del(stream);
    await client.quit();
  }
}

async function sqliteRows(bus: InProcessBus): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-metadata-store-'));
  try {
    const rows: Row[] = [];
    for (const synchronous of ['FULL', 'NORMAL'] as const) {
      const store = await createMetadataStore({
        kind: 'sqlite',
        path: join(dir, `${synchronous}.db`),
        synchronous,
        bus,
      });
      rows.push(...(await storeRows(`sqlite (synchronous=${synchronous})`, store)));
      await store.close();
    }
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function redisRows(url: string, bus: InProcessBus): Promise<Row[]> {
  const keyPrefix = `bench-meta-${process.pid}:`;
  const store = await createMetadataStore({ kind: 'redis', url, keyPrefix, bus });
  try {
    return [...(await storeRows('redis', store)), await xaddRow(url)];
  } finally {
    await store.close();
    const client = new Redis(url);
    await deletePrefix(client, keyPrefix);
    await client.quit();
  }
}

async function clusterRows(bus: InProcessBus): Promise<Row[]> {
  let cluster: RedisClusterProcess | undefined;
  try {
    cluster = await startRedisCluster();
    const startupNodes = cluster.startupNodes;
    const store = await createMetadataStore({ kind: 'redis', cluster: { startupNodes }, keyPrefix: 'bench:', bus });
    const rows = await storeRows('redis cluster (3 masters)', store);
    await store.close();
    return rows;
  } finally {
    await cluster?.stop();
  }
}

async function deletePrefix(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  for (let round = 0; round < 10_000; round++) {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 5000);
    if (keys.length > 0) await client.unlink(...keys);
    cursor = next;
    if (cursor === '0') return;
  }
}

async function main(): Promise<void> {
  let server: ServerProcess | undefined;
  const url = process.env['LEDGERLINE_BENCH_REDIS_URL'] ?? (server = await startRedis()).url;
  // Notifications are part of every write's cost, so every store publishes to a bus nobody drains.
  const bus = new InProcessBus();
  try {
    console.log(`metadata store: ${OPERATIONS} operations per row, ${VALUE_BYTES} B values, ${IN_FLIGHT} callers`);
    const rows = [
      ...(await sqliteRows(bus)),
      ...(await redisRows(url, bus)),
      ...(withCluster ? await clusterRows(bus) : []),
    ];
    console.table(rows);
    const xadd = rows.find((r) => r.operation.startsWith('XADD'));
    const put = rows.find((r) => r.backend === 'redis' && r.operation === 'put (create)');
    const get = rows.find((r) => r.backend === 'redis' && r.operation === 'get');
    if (xadd && put && get) {
      const percent = (row: Row) => Math.round((100 * row.opsPerSecond) / xadd.opsPerSecond);
      console.log(`redis metadata put reaches ${percent(put)}% and get ${percent(get)}% of raw pipelined XADD`);
    }
  } finally {
    await bus.close();
    await server?.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
