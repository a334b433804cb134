import { startRedisCluster, type RedisClusterProcess } from '@ledgerline/testing';
import { metadataStoreConformance } from './metadata-store.conformance.js';
import { redisBackend } from './redis-conformance-support.js';

let cluster: RedisClusterProcess;

metadataStoreConformance(
  redisBackend(
    'RedisMetadataStore on a 3-master Redis Cluster',
    async () => {
      cluster = await startRedisCluster();
      return { cluster: { startupNodes: cluster.startupNodes } };
    },
    async () => {
      await cluster.stop();
    },
  ),
);
