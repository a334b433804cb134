import { clusterBusConfig, createBus } from '@ledgerline/bus';
import { createMetadataStore } from '@ledgerline/metadata-store';
import { createLogger, loadConfig } from '@ledgerline/service-kit';
import { redisTarget } from '@ledgerline/storage-kit';
import { clusterConfigSchema, type ClusterConfig } from './config.js';
import { startMetadataService, type MetadataServiceOptions, type RunningMetadataService } from './metadata-server.js';
import { StoreHealthGate } from './store-api/store-health-gate.js';

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
  // One logger for the service and its store, so the store's background errors land in the service's log.
  const logger =
    options.logger ?? createLogger(options.name ?? 'metadata', { level: config.logLevel, format: config.logFormat });
  const bus = await createBus(
    clusterBusConfig(config.natsUrl, 'ledgerline-metadata', (message) => logger.warn({}, message)),
  );
  try {
    const store = await createMetadataStore({
      kind: 'redis',
      ...redisTarget(config.redisUrl),
      keyPrefix: config.redisKeyPrefix,
      bus,
      logger,
    });
    const running = await startMetadataService({ ...options, logger, store, bus, config });
    new StoreHealthGate(store, running.service.grpc, config, running.service.logger).start();
    return running;
  } catch (error) {
    await bus.close();
    throw error;
  }
}

/**
 * The one way a cluster's metadata service starts: settings from LEDGERLINE_*
 * variables with `--flag value` overrides (`argv`), validated by
 * clusterConfigSchema (INVALID_ARGUMENT / INVALID_CONFIG when they are not),
 * then startClusterMetadataService. apps/metadata, the cluster entry point,
 * runs it; `ledgerline metadata` runs the same function.
 */
export async function runClusterMetadataService(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ config: ClusterConfig; running: RunningMetadataService }> {
  const config = loadConfig(clusterConfigSchema, { argv, env });
  return { config, running: await startClusterMetadataService(config) };
}
