import { serviceConfigSchema } from '@ledgerline/service-kit';
import { z } from 'zod';
import { DEFAULT_RECOUNT_SETTLE_MS } from './limits.js';

/** Settings of the metadata service's background work (see maintenance.ts). */
export const maintenanceSettings = {
  /** How often every namespace's topic counter is recounted, in ms (a full scan of each namespace). */
  reconcileIntervalMs: z
    .number()
    .int()
    .min(1000)
    .max(7 * 24 * 3_600_000)
    .default(3_600_000),
  /** How long a topic counter must be still before a recount may correct it, in ms. */
  recountSettleMs: z.number().int().min(0).max(3_600_000).default(DEFAULT_RECOUNT_SETTLE_MS),
  /** How often expired owner sessions are swept away, in ms. */
  ownerSweepIntervalMs: z.number().int().min(100).max(3_600_000).default(10_000),
};

/** The metadata service in a cluster: Redis for metadata, NATS for notifications. */
export const clusterConfigSchema = serviceConfigSchema.extend({
  /** `redis://host:port` of the metadata Redis (LEDGERLINE_REDIS_URL). */
  redisUrl: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL'),
  /** `nats://host:port` (comma-separated for several) of the NATS servers (LEDGERLINE_NATS_URL). */
  natsUrl: z.string().regex(/^nats:\/\//, 'must be a nats:// URL'),
  /** Prefix of every Redis key, so several deployments can share one Redis. */
  redisKeyPrefix: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[^{}]+$/, 'may not contain { or }')
    .default('ledgerline'),
  ...maintenanceSettings,
});
export type ClusterConfig = z.output<typeof clusterConfigSchema>;

/** Standalone mode: SQLite under dataDir and the in-process bus. */
export const standaloneConfigSchema = serviceConfigSchema.extend({
  /** Where the SQLite files live. */
  dataDir: z.string().min(1).default('./data'),
  ...maintenanceSettings,
});
export type StandaloneConfig = z.output<typeof standaloneConfigSchema>;

export type MaintenanceConfig = Pick<ClusterConfig, 'reconcileIntervalMs' | 'recountSettleMs' | 'ownerSweepIntervalMs'>;
