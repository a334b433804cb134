import { startRedisCluster, uniqueNamespace, type RedisClusterProcess } from '@ledgerline/testing';
import { metadataStoreConformance } from './testing/metadata-store.conformance.js';
import { redisBackend } from './testing/redis-conformance-support.js';
import { connectRedis } from './redis-connection.js';
import { casUnderConnectionDrops } from './testing/redis-drops.js';
import { RedisMetadataStore } from './redis-store.js';
import type { MetadataStore } from './store.js';

let cluster: RedisClusterProcess;
beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
  await cluster.stop();
});

metadataStoreConformance(
  redisBackend(
    'RedisMetadataStore on a 3-master Redis Cluster',
    async () => ({ cluster: { startupNodes: cluster.startupNodes } }),
    async () => undefined,
  ),
);

// Runs after the conformance suite, whose clients it would cut off. A Cluster client re-sends a
// command whose connection closed unless told not to: a compare-and-set could then lose to itself.
it('keeps compare-and-set linearizable while client connections to every master are dropped', async () => {
  const keyPrefix = `${uniqueNamespace('drops')}:`;
  const clients: MetadataStore[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      const client = await connectRedis({ cluster: { startupNodes: cluster.startupNodes } });
      clients.push(new RedisMetadataStore(client, { keyPrefix }));
    }
    const nodeUrls = cluster.nodes.map((node) => node.url);
    const { calls, failures } = await casUnderConnectionDrops(clients, nodeUrls, '/cas', 6);
    expect(failures).toEqual([]);
    expect(calls.some((call) => call.answer.kind === 'unknown')).toBe(true);
    expect(calls.some((call) => call.op === 'put' && call.answer.kind === 'version')).toBe(true);
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
}, 60_000);
