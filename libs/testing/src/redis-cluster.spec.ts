import { Redis } from 'ioredis';
import { startRedisCluster, type RedisClusterProcess } from './redis-cluster';

let cluster: RedisClusterProcess | undefined;
afterAll(async () => {
  await cluster?.stop();
});

it('resolves only once every master reports cluster_state:ok, so a client connecting at once is not turned away', async () => {
  cluster = await startRedisCluster();
  const states = await Promise.all(
    cluster.nodes.map(async (node) => {
      const client = new Redis(node.url, { lazyConnect: true });
      try {
        await client.connect();
        const info = await client.cluster('INFO');
        return /cluster_state:(\w+)/.exec(info)?.[1];
      } finally {
        client.disconnect();
      }
    }),
  );
  expect(states).toEqual(['ok', 'ok', 'ok']);
});
