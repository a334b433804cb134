import { startRedisCluster, type RedisClusterProcess } from '@ledgerline/testing';
import { describeLedgerStoreConformance } from './ledger-store.conformance.js';
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
