import { Redis } from 'ioredis';
import { startRedisCluster, uniqueNamespace, type RedisClusterProcess } from '@ledgerline/testing';
import { expectFencingModelHeld, fencingUnderConnectionDrops } from './testing/connection-drops.js';
import { describeLedgerStoreConformance } from './testing/ledger-store.conformance.js';
import { RedisLedgerStore } from './redis-store.js';

let cluster: RedisClusterProcess | undefined;
beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

describeLedgerStoreConformance({
  name: 'redis-cluster',
  open: (namespace, options) =>
    new RedisLedgerStore({ ...options, cluster: { startupNodes: cluster!.startupNodes }, keyPrefix: `${namespace}:` }),
});

it('spreads ledgers over the masters, each ledger whole on one of them', async () => {
  const keyPrefix = `${uniqueNamespace('spread')}:`;
  const store = new RedisLedgerStore({ cluster: { startupNodes: cluster!.startupNodes }, keyPrefix });
  for (let id = 0; id < 30; id++) await (await store.create(id)).append([Uint8Array.of(id)]);
  await store.close();
  const ledgersPerNode: number[] = [];
  for (const node of cluster!.nodes) {
    const client = new Redis(node.url);
    const [, keys] = await client.scan('0', 'MATCH', `${keyPrefix}{*`, 'COUNT', 10_000);
    await client.quit();
    const metas = new Set(keys.filter((k) => k.endsWith(':meta')).map((k) => k.slice(0, -':meta'.length)));
    const entries = new Set(keys.filter((k) => k.endsWith(':entries')).map((k) => k.slice(0, -':entries'.length)));
    expect([...entries].sort()).toEqual([...metas].sort());
    ledgersPerNode.push(metas.size);
  }
  expect(ledgersPerNode.reduce((a, b) => a + b, 0)).toBe(30);
  expect(ledgersPerNode.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
});

// A Cluster client re-sends a command whose connection closed unless told not to: this caught appends stored twice.
it('keeps the fencing model while client connections to every master are dropped', async () => {
  const result = await fencingUnderConnectionDrops(
    (keyPrefix) => new RedisLedgerStore({ cluster: { startupNodes: cluster!.startupNodes }, keyPrefix }),
    cluster!.nodes.map((node) => node.url),
    3,
  );
  expectFencingModelHeld(result);
}, 60_000);
