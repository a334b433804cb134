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

/**
 * What a client's report of an owner it cannot reach does (unreachable-owners.ts,
 * docs/failover.md); unset, DEFAULT_UNREACHABLE_OWNER_SETTINGS' 30 s and 500 ms.
 */
export const unreachableOwnerSettings = {
  /** A topic moved off an owner its clients could not reach is not moved so again for this long, in ms; 0: never. */
  unreachableOwnerCooldownMs: z.number().int().min(0).max(86_400_000).optional(),
  /** How long a lookup waits for that move before it answers with the owner it has, in ms. */
  unreachableOwnerMoveWaitMs: z.number().int().min(0).max(60_000).optional(),
};

/** The balancer's settings (see balancer.ts and docs/placement.md); one metadata instance at a time runs it. */
export const balancerSettings = {
  /** Whether this instance competes to run the balancer. */
  balancerEnabled: z.boolean().default(true),
  /** How often the balancer looks at every owner group, in ms. */
  balancerIntervalMs: z.number().int().min(100).max(3_600_000).default(30_000),
  /** Shed moves (topics leaving an owner loaded past the threshold) started per round, over every group. */
  balancerMaxMovesPerRound: z.number().int().min(1).max(10_000).default(100),
  /**
   * Join moves (topics following placement to owners that joined) started per
   * round, over every group. Apart from the shed bound: joins follow placement,
   * so they never flap, and scaling out should not wait a round per hundred topics.
   */
  balancerMaxJoinMovesPerRound: z.number().int().min(1).max(100_000).default(2_000),
  /** Moves of one round carried out at once (each a transfer by its source owner). */
  balancerTransferConcurrency: z.number().int().min(1).max(256).default(32),
  /**
   * Of those, how many move topics into one owner at once: an owner that just
   * joined is sent its share in one round, and loading all of it at once made
   * each topic wait for all the others (coordination/move-schedule.ts).
   */
  balancerTransferConcurrencyPerOwner: z.number().int().min(1).max(256).default(4),
  /**
   * How often the balancer looks for owners that joined since its last round,
   * in ms; when two looks in a row see the same ones, a round starts then
   * instead of at the next interval. 0 turns this off.
   */
  balancerJoinCheckIntervalMs: z.number().int().min(0).max(3_600_000).default(2_000),
  /** An owner further than this from its group's mean load, in percent, is out of balance. */
  balancerThresholdPercent: z.number().min(1).max(1_000).default(10),
  /** Rounds in a row a group must stay out of balance before topics are shed. */
  balancerWindowRounds: z.number().int().min(1).max(1_000).default(3),
  /** A topic the balancer moved is not moved again for this long, in ms. */
  balancerTopicCooldownMs: z.number().int().min(0).max(86_400_000).default(600_000),
  /** An owner registered this recently has joined: topics whose placement now points at it move to it, in ms. */
  balancerJoinWindowMs: z.number().int().min(0).max(86_400_000).default(300_000),
  /** Messages per second (in plus out) that weigh as much as owning one topic. */
  balancerMessagesPerTopic: z.number().min(1).max(1e9).default(100),
};
const balancerSettingsSchema = z.object(balancerSettings);
export type BalancerConfig = z.output<typeof balancerSettingsSchema>;

/** Every balancer setting, with the defaults filled in for those not given. */
export function resolveBalancerSettings(input: Partial<BalancerConfig> = {}): BalancerConfig {
  return balancerSettingsSchema.parse(input);
}

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
  /**
   * How often the instance tries Redis, in ms (store-health-gate.ts): after
   * storeCheckFailures failed tries in a row it stops serving and sends its
   * clients to the other replicas, until a try succeeds.
   */
  storeCheckIntervalMs: z.number().int().min(100).max(60_000).default(1_000),
  storeCheckFailures: z.number().int().min(1).max(100).default(2),
  ...maintenanceSettings,
  ...balancerSettings,
  ...unreachableOwnerSettings,
});
export type ClusterConfig = z.output<typeof clusterConfigSchema>;

/** Standalone mode: SQLite under dataDir and the in-process bus. */
export const standaloneConfigSchema = serviceConfigSchema.extend({
  /** Where the SQLite files live. */
  dataDir: z.string().min(1).default('./data'),
  ...maintenanceSettings,
  ...balancerSettings,
  ...unreachableOwnerSettings,
});
export type StandaloneConfig = z.output<typeof standaloneConfigSchema>;

export type MaintenanceConfig = Pick<ClusterConfig, 'reconcileIntervalMs' | 'recountSettleMs' | 'ownerSweepIntervalMs'>;
