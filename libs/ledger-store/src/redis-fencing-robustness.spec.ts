import { startRedis, type ServerProcess } from '@ledgerline/testing';
import { expectFencingModelHeld, fencingUnderConnectionDrops } from './testing/connection-drops.js';
import { RedisLedgerStore } from './redis-store.js';

/*
 * Fencing while every connection is dropped again and again, on a private
 * redis-server (CLIENT KILL would cut other test files off a shared one).
 * The model: every acknowledged append reads back at its ids, ids stay dense
 * and in call order, no batch is stored twice or in part, nothing issued after
 * the fence returned is acknowledged, and the fenced LAC covers every
 * acknowledged entry and stays put.
 */

let redis: ServerProcess;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});

it('keeps the fencing model while client connections are dropped', async () => {
  const result = await fencingUnderConnectionDrops(
    (keyPrefix) => new RedisLedgerStore({ url: redis.url, keyPrefix, connectionName: 'fencing-robustness' }),
    [redis.url],
    3,
  );
  expectFencingModelHeld(result);
}, 60_000);
