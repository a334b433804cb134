import { Redis } from 'ioredis';
import { ErrorReason, LedgerlineError } from '@ledgerline/errors';
import { eventually, startRedis, uniqueNamespace, type ServerProcess } from '@ledgerline/testing';
import { taggedEntry } from './testing/conformance-support.js';
import { LedgerStoreReason } from './errors.js';
import { RedisLedgerStore } from './redis-store.js';

/*
 * The batch forms on Redis, where one batch is one pipeline of per-ledger
 * commands (then one ZREM): a failure of one command, of the index update or
 * of the connection must fail exactly the ledgers it may have left behind,
 * and never leave a ledger that exists unlisted.
 */

const CONNECTION_NAME = 'ledger-store-batches-test';
let redis: ServerProcess;
let admin: Redis;

beforeAll(async () => {
  redis = await startRedis();
  admin = new Redis(redis.url);
});
afterAll(async () => {
  await admin.quit();
  await redis.stop();
});

async function storeWith(ids: number[]): Promise<{ store: RedisLedgerStore; prefix: string }> {
  const prefix = `${uniqueNamespace('batches')}:`;
  const store = new RedisLedgerStore({ url: redis.url, keyPrefix: prefix, connectionName: CONNECTION_NAME });
  for (const id of ids) await (await store.create(id)).append([taggedEntry(id, 0)]);
  return { store, prefix };
}

function reasonOf(result: PromiseSettledResult<unknown> | undefined): string {
  if (result?.status !== 'rejected') return 'fulfilled';
  const error = result.reason as LedgerlineError;
  expect(error).toBeInstanceOf(LedgerlineError);
  return `${error.code} ${error.reason}`;
}

it('fails only the corrupt ledger of an infoMany, answering the others', async () => {
  const { store, prefix } = await storeWith([1, 2, 3]);
  await admin.hset(`${prefix}{ledger:2}:meta`, 'v', '9');
  const results = await store.infoMany!([1, 2, 3]);
  expect(results.map(reasonOf)).toEqual([
    'fulfilled',
    `INTERNAL ${LedgerStoreReason.LEDGER_STORE_CORRUPT}`,
    'fulfilled',
  ]);
  expect(results[2]).toEqual({ status: 'fulfilled', value: await store.info(3) });
  await store.close();
});

it('reports ledgers whose index entries it could not remove as failed, and a retry clears them', async () => {
  const { store, prefix } = await storeWith([1, 2, 3]);
  // The index as a key of the wrong type: the ledgers' own keys go, the ZREM after them fails.
  const index = `${prefix}ledgers`;
  const listed = await admin.zrange(index, '0', '-1');
  await admin.del(index);
  await admin.set(index, 'not a sorted set');
  const results = await store.deleteMany!([1, 2]);
  expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  expect(await store.infoMany!([1, 2, 3])).toEqual([
    { status: 'fulfilled', value: undefined },
    { status: 'fulfilled', value: undefined },
    { status: 'fulfilled', value: expect.objectContaining({ ledgerId: 3 }) },
  ]);
  await admin.del(index);
  await admin.zadd(index, ...listed.flatMap((id) => [id, id]));
  // Gone but listed, as after an interrupted delete: the retry removes what is left.
  expect((await store.list()).ledgerIds).toEqual([1, 2, 3]);
  expect((await store.deleteMany!([1, 2])).map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
  expect((await store.list()).ledgerIds).toEqual([3]);
  await store.close();
});

it('fails a deleteMany whose connection drops with UNAVAILABLE, and never leaves a ledger unlisted', async () => {
  const ids = Array.from({ length: 200 }, (_, i) => i + 1);
  const { store } = await storeWith(ids);
  const connections = ((await admin.client('LIST')) as string)
    .split('\n')
    .filter((line) => line.includes(` name=${CONNECTION_NAME} `))
    .map((line) => /id=(\d+)/.exec(line)![1]!);
  // Held at the server, so the kill surely finds the batch in flight.
  await admin.client('PAUSE', 5_000, 'WRITE');
  const batch = store.deleteMany!(ids).catch((thrown: unknown) =>
    ids.map(() => ({ status: 'rejected', reason: thrown })),
  );
  await Promise.all(connections.map((id) => admin.client('KILL', 'ID', id)));
  await admin.client('UNPAUSE');
  const results = (await batch) as PromiseSettledResult<void>[];
  expect(new Set(results.map(reasonOf))).toEqual(new Set([`UNAVAILABLE ${ErrorReason.STORE_UNAVAILABLE}`]));
  await eventually(async () => (await store.list().catch(() => undefined)) !== undefined);
  // Whatever landed, every ledger that still exists is listed.
  const infos = await store.infoMany!(ids);
  const existing = ids.filter((_, i) => infos[i]!.status === 'fulfilled' && infos[i]!.value !== undefined);
  const listed = new Set((await store.list({ limit: 1_000 })).ledgerIds);
  expect(existing.filter((id) => !listed.has(id))).toEqual([]);
  expect((await store.deleteMany!(ids)).every((r) => r.status === 'fulfilled')).toBe(true);
  expect((await store.list()).ledgerIds).toEqual([]);
  await store.close();
});
