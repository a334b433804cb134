import { serviceConfigSchema } from '@ledgerline/service-kit';
import { sharedServers, uniqueNamespace } from '@ledgerline/testing';
import { startClusterMetadataService } from './cluster.js';
import { resolveBalancerSettings, type ClusterConfig } from './config.js';
import { metadataE2ESuite } from './testing/e2e-suite.js';

describe('metadata service end to end: cluster (Redis, NATS, two instances over one Redis)', () => {
  metadataE2ESuite(async () => {
    const { redisUrl, natsUrl } = sharedServers();
    const config: ClusterConfig = {
      ...serviceConfigSchema.parse({
        grpcHost: '127.0.0.1',
        grpcPort: 0,
        metricsHost: '127.0.0.1',
        metricsPort: 0,
        logLevel: 'silent',
      }),
      redisUrl,
      natsUrl,
      redisKeyPrefix: uniqueNamespace('metadata-e2e'),
      reconcileIntervalMs: 3_600_000,
      recountSettleMs: 30_000,
      ownerSweepIntervalMs: 1000,
      // The balancer has specs of its own; here two instances race over the store without it.
      ...resolveBalancerSettings({ balancerEnabled: false }),
      storeCheckIntervalMs: 1_000,
      storeCheckFailures: 2,
    };
    const instances = await Promise.all([
      startClusterMetadataService(config, { signals: [], name: 'metadata-a' }),
      startClusterMetadataService(config, { signals: [], name: 'metadata-b' }),
    ]);
    return {
      addresses: instances.map((instance) => `127.0.0.1:${instance.port}`),
      async close() {
        await Promise.all(instances.map((instance) => instance.shutdown('test finished')));
      },
    };
  });
});
