import { DATA_PATH_LIMITS } from '@ledgerline/cursor-codec';
import { serviceConfigSchema } from '@ledgerline/service-kit';
import { z } from 'zod';

const KiB = 1024;
const MiB = 1024 * KiB;
const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/**
 * The writer owner's own bounds, with units in their names. Standalone and
 * the cluster app share them; each has its defaults here.
 */
export const writerSettings = {
  /** The owner group (isolation policy) this instance registers in (LEDGERLINE_OWNER_GROUP). */
  ownerGroup: z.string().min(1).max(128).default('default'),
  /** Stable id of this instance; empty derives one from the advertised address and process id. */
  instanceId: z.string().max(128).default(''),
  /** host:port clients and peers reach this instance at; empty means localhost:<grpcPort>. */
  advertisedAddress: z.string().max(256).default(''),
  /** The owner session's TTL: leases lapse this long after the last keep-alive (Pulsar's ZK session timeout). */
  leaseTtlMs: z
    .number()
    .int()
    .min(1_000)
    .max(10 * MINUTE_MS)
    .default(10_000),
  /** Bytes of publishes accepted and not yet stored, per topic; a stream stops reading past it. */
  maxPendingBytesPerTopic: z
    .number()
    .int()
    .min(KiB)
    .max(16 * 1024 * MiB)
    .default(64 * MiB),
  /** Entries accepted and not yet stored, per topic (the managed ledger is given room for twice as many). */
  maxPendingEntriesPerTopic: z.number().int().min(1).max(500_000).default(5_000),
  /** Bytes of publishes accepted and not yet answered, per publish stream. */
  maxPendingBytesPerStream: z
    .number()
    .int()
    .min(KiB)
    .max(16 * 1024 * MiB)
    .default(8 * MiB),
  /** Bytes of publishes accepted and not yet answered, over all publish streams of one client connection. */
  maxPendingBytesPerConnection: z
    .number()
    .int()
    .min(KiB)
    .max(16 * 1024 * MiB)
    .default(32 * MiB),
  /** Entries accepted and not yet answered, per publish stream (each entry of a coalesced request counts). */
  maxPendingMessagesPerStream: z.number().int().min(1).max(1_000_000).default(10_000),
  /**
   * Entries one Publish request may carry (PublishRequest message and more); announced to producers,
   * which coalesce the entries queued at once up to it. The gRPC message size bounds the request's bytes.
   */
  maxMessagesPerPublishRequest: z
    .number()
    .int()
    .min(1)
    .max(DATA_PATH_LIMITS.maxMessagesPerPublishRequestCeiling)
    .default(DATA_PATH_LIMITS.defaultMaxMessagesPerPublishRequest),
  /** Largest entry a producer may publish, framing included (Pulsar's maxMessageSize is 5 MiB). */
  maxMessageSizeBytes: z
    .number()
    .int()
    .min(KiB)
    .max(64 * MiB)
    .default(5 * MiB),
  /** Producers whose deduplication state a topic keeps; the least recently active go first beyond it. */
  maxDedupProducersPerTopic: z.number().int().min(1).max(100_000).default(10_000),
  /** A producer silent this long is forgotten by deduplication (Pulsar's 6 h default). */
  dedupProducerInactivityMs: z
    .number()
    .int()
    .min(1_000)
    .max(30 * 24 * HOUR_MS)
    .default(6 * HOUR_MS),
  /** Deduplication state is snapshotted after this many entries (Pulsar's brokerDeduplicationEntriesInterval)... */
  dedupSnapshotIntervalEntries: z.number().int().min(1).max(10_000_000).default(1_000),
  /** ...or this often while entries arrive. */
  dedupSnapshotIntervalMs: z.number().int().min(100).max(HOUR_MS).default(120_000),
  /** Trimming by retention runs this often per topic (and after acknowledgements). */
  trimIntervalMs: z.number().int().min(100).max(HOUR_MS).default(60_000),
  /** Topics one instance owns at most. */
  maxTopics: z.number().int().min(1).max(1_000_000).default(100_000),
  /** Entries one FetchByOffset returns at most, and the longest it waits. */
  maxFetchEntries: z.number().int().min(1).max(100_000).default(1_000),
  maxFetchWaitMs: z.number().int().min(0).max(MINUTE_MS).default(30_000),
  /** Ledger rollover: entries per ledger (Pulsar managedLedgerMaxEntriesPerLedger). */
  maxEntriesPerLedger: z.number().int().min(1).max(10_000_000).default(50_000),
  /**
   * Times every stage of the data path (StageTrace: publish read to answered, store writes, dispatch, GC pauses,
   * event-loop delay) and exports their quantiles; off by default (LEDGERLINE_STAGE_TRACE), as it costs per entry.
   */
  stageTrace: z.boolean().default(false),
  /** Ledger rollover never happens before a ledger is this old. */
  minLedgerAgeMs: z
    .number()
    .int()
    .min(0)
    .max(7 * 24 * HOUR_MS)
    .default(10 * MINUTE_MS),
  /** A transfer's bound on each of its steps (finishing what is in flight, the hand-over, the target's load). */
  transferTimeoutMs: z
    .number()
    .int()
    .min(100)
    .max(10 * MINUTE_MS)
    .default(10_000),
  /**
   * Transfers one drain runs at once (SIGTERM, or `ledgerline owners drain`).
   * A drain is CPU-bound (every process on the node shares the cores), so
   * more at once does not end it sooner, it only pauses each topic longer:
   * 100 busy topics drained in about the same 1.0 to 1.3 s at 8 and at 16,
   * with send p99.99 96 to 146 ms at 8 and 270 to 417 ms at 16
   * (bench/drain-many-topics.ts, docs/placement.md).
   */
  drainTransferConcurrency: z.number().int().min(1).max(1_000).default(8),
  /**
   * An owner whose ledger store answered nothing for this long hands its topics to owners that can write and
   * takes none until the store answers again (docs/architecture.md, "Ownership and fencing"); 0 turns it off.
   * Far below a client's operation timeout, so producers move instead of timing out.
   */
  storeUnreachableReleaseMs: z.number().int().min(0).max(MINUTE_MS).default(2_000),
  /** How often the owner tries its ledger store (one read); at most half of storeUnreachableReleaseMs is used. */
  ledgerStoreCheckIntervalMs: z.number().int().min(10).max(MINUTE_MS).default(500),
};

/** The cluster writer owner: metadata over gRPC, Redis for ledgers, NATS for notifications. */
export const writerClusterConfigSchema = serviceConfigSchema.extend({
  /** host:port of the metadata service (LEDGERLINE_METADATA_ADDRESS). */
  metadataAddress: z.string().min(1).default('localhost:6651'),
  /** `redis://host:port` of the ledger Redis (LEDGERLINE_REDIS_URL). */
  redisUrl: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL'),
  /** Prefix of the ledger store's Redis keys. */
  redisKeyPrefix: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[^{}]+$/, 'may not contain { or }')
    .default('ledgerline'),
  /** `nats://host:port` (comma-separated for several) (LEDGERLINE_NATS_URL). */
  natsUrl: z.string().regex(/^nats:\/\//, 'must be a nats:// URL'),
  ...writerSettings,
});
export type WriterClusterConfig = z.output<typeof writerClusterConfigSchema>;

const writerSettingsSchema = z.object(writerSettings);
/** The writer owner's settings, whichever process hosts it. */
export type WriterSettings = z.output<typeof writerSettingsSchema>;

/** The settings with every default filled in, for hosts (standalone, tests) that set only a few. */
export function resolveWriterSettings(input: Partial<WriterSettings> = {}): WriterSettings {
  return writerSettingsSchema.parse(input);
}
