import { clusterBusConfig, createBus, type Bus } from '@ledgerline/bus';
import { createLedgerStore, type LedgerStore } from '@ledgerline/ledger-store';
import { redisTarget } from '@ledgerline/storage-kit';
import { GarbageCollectorService } from '@ledgerline/proto';
import {
  createLogger,
  createMetrics,
  grpcService,
  serve,
  serviceChannel,
  serviceConfigSchema,
  type RunningService,
  type ServiceConfig,
} from '@ledgerline/service-kit';
import { z } from 'zod';
import { GarbageCollector, type GarbageCollectorOptions } from './collector.js';
import { GrpcCollectorMetadata, type CollectorMetadata } from './collector-metadata.js';
import { collectorSettings } from './config.js';
import { garbageCollectorServiceImpl } from './service.js';

/** The collector in a cluster: the metadata service over gRPC, ledgers in Redis, hints on NATS. */
export const clusterCollectorConfigSchema = serviceConfigSchema.extend({
  /** host:port of the metadata service (LEDGERLINE_METADATA_ADDRESS). */
  metadataAddress: z.string().regex(/^[^\s/]+:\d{1,5}$/, 'must be host:port'),
  /** `redis://host:port` of the ledger store's Redis (LEDGERLINE_LEDGER_REDIS_URL). */
  ledgerRedisUrl: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL'),
  /** Prefix of the ledger store's Redis keys: the same the writers use. */
  ledgerRedisKeyPrefix: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[^{}]+$/, 'may not contain { or }')
    .default('ledgerline'),
  /** `nats://host:port` (comma-separated for several) for "ledgers deletable" hints (LEDGERLINE_NATS_URL). */
  natsUrl: z.string().regex(/^nats:\/\//, 'must be a nats:// URL'),
  /** Unique per instance; a random id when unset (LEDGERLINE_INSTANCE_ID, e.g. the pod name). */
  instanceId: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,128}$/, 'letters, digits, . _ - only')
    .optional(),
  ...collectorSettings,
});
export type ClusterCollectorConfig = z.output<typeof clusterCollectorConfigSchema>;

export interface RunningCollectorService {
  readonly collector: GarbageCollector;
  readonly service: RunningService;
  readonly port: number;
  shutdown(reason?: string): Promise<void>;
}

export interface CollectorServiceOptions extends Omit<GarbageCollectorOptions, 'registry' | 'logger'> {
  config: ServiceConfig & NonNullable<GarbageCollectorOptions['config']>;
  name?: string;
  signals?: readonly NodeJS.Signals[];
  /** Closed after the collector stopped (newest first). */
  closers?: { name: string; close(): Promise<void> | void }[];
}

/**
 * Runs a collector with GarbageCollectorService on its own gRPC port (with
 * health and reflection), metrics over HTTP, and a graceful shutdown that
 * drains calls, stops the collector (it leaves, so its shards move at once),
 * then closes what it was given.
 */
export async function startCollectorService(options: CollectorServiceOptions): Promise<RunningCollectorService> {
  const name = options.name ?? 'garbage-collector';
  const metrics = createMetrics(name);
  const pick = (key: string) => (options.config as Record<string, unknown>)[key];
  const collectorConfig = Object.fromEntries(
    Object.keys(collectorSettings)
      .filter((key) => pick(key) !== undefined)
      .map((key) => [key, pick(key)]),
  );
  const logger = createLogger(name, { level: options.config.logLevel, format: options.config.logFormat });
  const collector = new GarbageCollector({ ...options, config: collectorConfig, registry: metrics.registry, logger });
  const service = await serve({
    name,
    config: options.config,
    metrics,
    logger,
    services: [grpcService(GarbageCollectorService, garbageCollectorServiceImpl(collector))],
    ...(options.signals === undefined ? {} : { signals: options.signals }),
    closers: [...(options.closers ?? []), { name: 'collector', close: () => collector.stop() }],
  });
  await collector.start();
  return {
    collector,
    service,
    port: service.grpcPort,
    async shutdown(reason) {
      await service.shutdown(reason);
    },
  };
}

/** The cluster collector: connects the metadata service, the Redis ledger store and NATS, then serves. */
export async function startClusterCollector(
  config: ClusterCollectorConfig,
  options: { signals?: readonly NodeJS.Signals[] } = {},
): Promise<RunningCollectorService> {
  // With mutual TLS the collector's certificate is its identity to the metadata service's internal APIs.
  const channel = serviceChannel(config);
  const metadata = GrpcCollectorMetadata.connect(config.metadataAddress, config.metadataDeadlineMs, channel.settings);
  let bus: Bus | undefined;
  let ledgerStore: LedgerStore | undefined;
  try {
    bus = await createBus(clusterBusConfig(config.natsUrl, 'ledgerline-garbage-collector'));
    ledgerStore = createLedgerStore({
      kind: 'redis',
      ...redisTarget(config.ledgerRedisUrl),
      keyPrefix: config.ledgerRedisKeyPrefix,
    });
    const store = ledgerStore;
    const openedBus = bus;
    await metadata.reachable();
    return await startCollectorService({
      metadata: metadata as CollectorMetadata,
      ledgerStore: store,
      bus: openedBus,
      config,
      ...(config.instanceId === undefined ? {} : { instanceId: config.instanceId }),
      ...options,
      closers: [
        { name: 'metadata-client', close: () => metadata.close() },
        { name: 'tls-files', close: () => channel.close() },
        { name: 'bus', close: () => openedBus.close() },
        { name: 'ledger-store', close: () => store.close() },
      ],
    });
  } catch (error) {
    metadata.close();
    channel.close();
    await bus?.close();
    await ledgerStore?.close();
    throw error;
  }
}
