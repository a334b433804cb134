import { serviceConfigSchema } from '@ledgerline/service-kit';
import { z } from 'zod';

const MINUTE_MS = 60_000;

/**
 * The read-only owner's own bounds, with units in their names. Standalone and
 * the cluster app share them; each has its defaults here.
 */
export const readOnlySettings = {
  /** The owner group this instance registers in (LEDGERLINE_OWNER_GROUP): the group of the reader namespaces it serves. */
  ownerGroup: z.string().min(1).max(128).default('readers'),
  /** Stable id of this instance; empty derives one from the advertised address and process id. */
  instanceId: z.string().max(128).default(''),
  /** host:port clients reach this instance at; empty means localhost:<grpcPort>. */
  advertisedAddress: z.string().max(256).default(''),
  /** The owner session's TTL: leases lapse this long after the last keep-alive. */
  leaseTtlMs: z
    .number()
    .int()
    .min(1_000)
    .max(10 * MINUTE_MS)
    .default(10_000),
  /** Topics one instance serves at most. */
  maxTopics: z.number().int().min(1).max(1_000_000).default(100_000),
  /** A reader waiting at the end re-reads the LAC from the ledger store after this long without a notification. */
  lacFallbackMs: z.number().int().min(1).max(MINUTE_MS).default(200),
  /** ManagedLedgerInfo of each served topic is re-read this often even without notifications. */
  metadataRefreshMs: z
    .number()
    .int()
    .min(100)
    .max(10 * MINUTE_MS)
    .default(5_000),
  /** Bytes of entries kept in memory per topic, shared by its subscriptions. */
  entryCacheMaxBytesPerTopic: z
    .number()
    .int()
    .min(0)
    .max(4 * 1024 * 1024 * 1024)
    .default(16 * 1024 * 1024),
  /** Acks are sent to the writer owner at most this long after they are taken... */
  cursorSyncIntervalMs: z.number().int().min(1).max(MINUTE_MS).default(100),
  /** ...or as soon as this many acks are waiting. */
  cursorSyncMaxAcks: z.number().int().min(1).max(1_000_000).default(1_000),
  /** Ranges and batches one cursor update carries at most (the writer's maxAckDeltaRanges). */
  maxDeltaRanges: z.number().int().min(1).max(1_000_000).default(10_000),
  /**
   * Acknowledged ranges of the writer's cursor this owner merges whole (see
   * writer-cursor.ts): a larger cursor is merged by its mark-delete position only.
   */
  cursorMergeMaxRanges: z.number().int().min(0).max(1_000_000).default(50_000),
  /** A failed cursor update is retried after this long, doubling up to cursorSyncMaxBackoffMs. */
  cursorSyncRetryMs: z.number().int().min(1).max(MINUTE_MS).default(100),
  cursorSyncMaxBackoffMs: z
    .number()
    .int()
    .min(1)
    .max(10 * MINUTE_MS)
    .default(5_000),
  /** Deadline of one call to the writer owner. */
  writerCallTimeoutMs: z.number().int().min(100).max(MINUTE_MS).default(10_000),
};

/** The cluster read-only owner: metadata over gRPC, Redis for ledgers (read only), NATS for notifications. */
export const readOnlyClusterConfigSchema = serviceConfigSchema.extend({
  /** host:port of the metadata service (LEDGERLINE_METADATA_ADDRESS). */
  metadataAddress: z.string().min(1).default('localhost:6651'),
  /** `redis://host:port` of the ledger Redis (LEDGERLINE_REDIS_URL). */
  redisUrl: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL'),
  /** Prefix of the ledger store's Redis keys (the writer's). */
  redisKeyPrefix: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[^{}]+$/, 'may not contain { or }')
    .default('ledgerline'),
  /** `nats://host:port` (comma-separated for several) (LEDGERLINE_NATS_URL). */
  natsUrl: z.string().regex(/^nats:\/\//, 'must be a nats:// URL'),
  ...readOnlySettings,
});
export type ReadOnlyClusterConfig = z.output<typeof readOnlyClusterConfigSchema>;

const readOnlySettingsSchema = z.object(readOnlySettings);
/** The read-only owner's settings, whichever process hosts it. */
export type ReadOnlySettings = z.output<typeof readOnlySettingsSchema>;

/** The settings with every default filled in, for hosts (standalone, tests) that set only a few. */
export function resolveReadOnlySettings(input: Partial<ReadOnlySettings> = {}): ReadOnlySettings {
  return readOnlySettingsSchema.parse(input);
}
