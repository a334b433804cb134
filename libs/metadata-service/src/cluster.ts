import { createBus } from '@ledgerline/bus';
import { createMetadataStore } from '@ledgerline/metadata-store';
import type { ClusterConfig } from './config.js';
import { startMetadataService, type MetadataServiceOptions, type RunningMetadataService } from './metadata-server.js';

/**
 * The metadata service of a cluster: metadata in Redis (keys under
 * redisKeyPrefix, so several deployments may share a Redis), notifications on
 * NATS. Any number of instances may run over the same Redis: every write is a
 * compare-and-set there, and no state lives in an instance.
 */
export async function startClusterMetadataService(
  config: ClusterConfig,
  options: Pick<MetadataServiceOptions, 'signals' | 'logger' | 'name'> = {},
): Promise<RunningMetadataService> {
  const bus = await createBus({
    kind: 'nats',
    servers: config.natsUrl.split(',').map((server) => server.trim()),
    name: 'ledgerline-metadata',
  });
  try {
    const store = await createMetadataStore({
      kind: 'redis',
      url: config.redisUrl,
      keyPrefix: config.redisKeyPrefix,
      bus,
    });
    return await startMetadataService({ ...options, store, bus, config });
  } catch (error) {
    await bus.close();
    throw error;
  }
}
