// Ledger store throughput: appends of 1 KiB entries in batches of 100 with
// several batches in flight (pipelined), then range reads of the same
// entries, per backend; printed beside raw pipelined XADD of the same 1 KiB
// payload to the same Redis from the same process, the limit a Redis-backed
// ledger is compared against. Client and Redis share the machine's cores, so
// compare the rows of one run rather than absolute numbers across machines.
//
// Run: npx tsx bench/ledger-store-append.ts [--full] [--cluster]
//   Default 50 000 entries per row (well under a minute); --full writes 200 000.
//   --cluster adds rows for a 3-master Redis Cluster (started here, about 5 s).
//   Redis: LEDGERLINE_BENCH_REDIS_URL, or a throwaway redis-server started here.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import * as hdr from 'hdr-histogram-js';
import { RedisLedgerStore, SqliteLedgerStore, type LedgerStore } from '@ledgerline/ledger-store';
import { startRedis, startRedisCluster, type RedisClusterProcess, type ServerProcess } from '@ledgerline/testing';

const full = process.argv.includes('--full');
const withCluster = process.argv.includes('--cluster');
const ENTRIES = full ? 200_000 : 50_000;
const ENTRY_BYTES = 1024;
const BATCH = 100;
const IN_FLIGHT = 8;
const BATCHES = ENTRIES / BATCH;
const payload = new Uint8Array(ENTRY_BYTES).map((_, i) => (i * 7) & 0xff);
const batch = Array.from({ length: BATCH }, () => payload);

interface Row {
  backend: string;
  operation: string;
  entriesPerSecond: number;
  megabytesPerSecond: number;
  batchLatencyMsP50: number;
  batchLatencyMsP99: number;
}

/** Runs `BATCHES` batch operations with IN_FLIGHT of them outstanding, timing each. */
async function measure(
  backend: string,
  operation: string,
  run: (batchIndex: number) => Promise<unknown>,
): Promise<Row> {
  const histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000 });
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < BATCHES) {
      const index = next++;
      const started = process.hrtime.bigint();
      await run(index);
      histogram.recordValue(Number((process.hrtime.bigint() - started) / 1000n));
    }
  };
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return {
    backend,
    operation,
    entriesPerSecond: Math.round(ENTRIES / seconds),
    megabytesPerSecond: Math.round((ENTRIES * ENTRY_BYTES) / seconds / 1e5) / 10,
    batchLatencyMsP50: histogram.getValueAtPercentile(50) / 1000,
    batchLatencyMsP99: histogram.getValueAtPercentile(99) / 1000,
  };
}

/** Appends ENTRIES entries to one ledger, then reads them back in ranges of BATCH. */
async function ledgerRows(backend: string, store: LedgerStore, ledgerId: number): Promise<Row[]> {
  const writer = await store.create(ledgerId);
  await writer.append(batch); // warm-up: connection, script load, statement cache
  const append = await measure(backend, 'append', () => writer.append(batch));
  const lac = await store.lastAddConfirmed(ledgerId);
  if (lac !== ENTRIES + BATCH - 1) throw new Error(`${backend}: expected LAC ${ENTRIES + BATCH - 1}, found ${lac}`);
  const read = await measure(backend, 'read', async (i) => {
    const entries = await store.read(ledgerId, i * BATCH, i * BATCH + BATCH - 1);
    if (entries.length !== BATCH || entries[0]!.data.byteLength !== ENTRY_BYTES) throw new Error('short read');
  });
  await store.delete(ledgerId);
  return [append, read];
}

/** The baseline: BATCH XADDs per pipeline, IN_FLIGHT pipelines outstanding, on one connection. */
async function xaddRow(url: string): Promise<Row> {
  const client = new Redis(url);
  const stream = `bench:xadd:${process.pid}`;
  const bytes = Buffer.from(payload);
  try {
    return await measure('redis (raw)', 'XADD pipelined', async () => {
      const pipeline = client.pipeline();
      for (let i = 0; i < BATCH; i++) pipeline.xadd(stream, '*', 'd', bytes);
      const replies = await pipeline.exec();
      if (replies?.some(([error]) => error)) throw new Error('XADD failed');
    });
  } finally {
    await client.del(stream);
    await client.quit();
  }
}

async function sqliteRows(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-ledger-store-'));
  try {
    const rows: Row[] = [];
    for (const synchronous of ['FULL', 'NORMAL'] as const) {
      const store = new SqliteLedgerStore({ path: join(dir, `${synchronous}.db`), synchronous });
      rows.push(...(await ledgerRows(`sqlite (synchronous=${synchronous})`, store, 1)));
      await store.close();
    }
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function redisRows(url: string): Promise<Row[]> {
  const store = new RedisLedgerStore({ url, keyPrefix: `bench:${process.pid}:` });
  try {
    return [...(await ledgerRows('redis', store, 1)), await xaddRow(url)];
  } finally {
    await store.close();
  }
}

async function clusterRows(): Promise<Row[]> {
  let cluster: RedisClusterProcess | undefined;
  try {
    cluster = await startRedisCluster();
    const store = new RedisLedgerStore({ cluster: { startupNodes: cluster.startupNodes }, keyPrefix: 'bench:' });
    const rows = await ledgerRows('redis cluster (3 masters)', store, 1);
    await store.close();
    return rows;
  } finally {
    await cluster?.stop();
  }
}

async function main(): Promise<void> {
  let server: ServerProcess | undefined;
  const url = process.env['LEDGERLINE_BENCH_REDIS_URL'] ?? (server = await startRedis()).url;
  try {
    console.log(
      `ledger store: ${ENTRIES} entries of ${ENTRY_BYTES} B per row, batches of ${BATCH}, ${IN_FLIGHT} batches in flight`,
    );
    const rows = [...(await sqliteRows()), ...(await redisRows(url)), ...(withCluster ? await clusterRows() : [])];
    console.table(rows);
    const xadd = rows.find((r) => r.operation === 'XADD pipelined')!;
    const redisAppend = rows.find((r) => r.backend === 'redis' && r.operation === 'append')!;
    console.log(
      `redis ledger append reaches ${Math.round((100 * redisAppend.entriesPerSecond) / xadd.entriesPerSecond)}% of raw XADD`,
    );
  } finally {
    await server?.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
