import { startRedis, uniqueNamespace, type ServerProcess } from '@ledgerline/testing';
import { connectRedis } from './redis-connection.js';
import { casUnderConnectionDrops } from './testing/redis-drops.js';
import { RedisMetadataStore } from './redis-store.js';
import type { MetadataStore } from './store.js';

/*
 * Compare-and-set under dropped connections on a private redis-server (CLIENT
 * KILL would cut other test files off a shared one): every history stays
 * linearizable, with a call that failed UNAVAILABLE counted as maybe applied.
 */

let redis: ServerProcess;
const clients: MetadataStore[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await redis.stop();
});

it('keeps compare-and-set linearizable while client connections are dropped', async () => {
  const keyPrefix = `${uniqueNamespace('drops')}:`;
  for (let i = 0; i < 3; i++) {
    clients.push(new RedisMetadataStore(await connectRedis({ url: redis.url }), { keyPrefix }));
  }
  const { calls, failures } = await casUnderConnectionDrops(clients, [redis.url], '/cas', 4);
  expect(failures).toEqual([]);
  expect(calls.some((call) => call.answer.kind === 'unknown')).toBe(true);
  expect(calls.some((call) => call.op === 'put' && call.answer.kind === 'version')).toBe(true);
}, 60_000);
