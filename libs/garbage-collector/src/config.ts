import { ErrorReason, invalidArgument } from '@ledgerline/errors';
import { z } from 'zod';

const ms = (min: number, max: number) => z.number().int().min(min).max(max);
const HOUR_MS = 3_600_000;

/**
 * Every bound of the collector, with its unit. Defaults suit a production
 * cluster; tests shorten the intervals.
 */
export const collectorSettings = {
  /** How often a pass reads the pending-deletions index (the guarantee; NATS hints only come earlier). */
  gcIntervalMs: ms(100, HOUR_MS).default(10_000),
  /** How long after a "ledgers deletable" hint the hinted managed ledger is collected (batches bursts). */
  hintDelayMs: ms(0, 60_000).default(100),
  /** How often a full scan of every managed ledger looks for markers the index misses (the backstop). */
  fullScanIntervalMs: ms(60_000, 30 * 24 * HOUR_MS).default(24 * HOUR_MS),
  /** A triggered full scan is refused (FULL_SCAN_RATE_LIMITED) within this long of the last one. */
  fullScanMinGapMs: ms(0, 24 * HOUR_MS).default(60_000),
  /** How often the orphan sweep runs on its own (besides TriggerPass with sweep_orphans). */
  orphanSweepIntervalMs: ms(1_000, 30 * 24 * HOUR_MS).default(HOUR_MS),
  /**
   * A ledger is an orphan candidate only once it is older than this: longer
   * than the longest time between creating a ledger and recording it in
   * metadata (a managed ledger records a new ledger within one metadata call,
   * 10 s by default, times its open attempts; an hour leaves a wide margin).
   */
  orphanGraceMs: ms(0, 30 * 24 * HOUR_MS).default(HOUR_MS),
  /** Ledgers one sweep looks at; the next sweep continues after the last one. */
  maxSweepLedgersPerPass: z.number().int().min(1).max(1_000_000).default(10_000),
  /** Managed ledgers collected at once, across all the index shards this instance owns. */
  managedLedgerConcurrency: z.number().int().min(1).max(1_024).default(16),
  /**
   * Ledgers of one managed ledger in flight at once: each info and each
   * delete call to the ledger store carries a batch of at most this many (at
   * most the store's MAX_BATCH_LEDGERS; one round trip each on Redis), one
   * batch at a time; a store without batch calls gets at most this many single calls at once.
   */
  deleteConcurrency: z.number().int().min(1).max(1_024).default(64),
  /** Markers of one managed ledger handled per pass (the rest wait for the next). */
  maxMarkersPerManagedLedgerPerPass: z.number().int().min(1).max(1_000_000).default(10_000),
  /** First retry delay of a failed deletion; doubles per attempt, with full jitter. */
  retryBaseDelayMs: ms(1, HOUR_MS).default(1_000),
  /** Longest retry delay of a failed deletion. */
  retryMaxDelayMs: ms(1, 24 * HOUR_MS).default(5 * 60_000),
  /** A ledger whose deletion failed this many times is logged at warn level (each further tenth attempt too). */
  attemptsWarnThreshold: z.number().int().min(1).max(1_000_000).default(10),
  /** A collector instance that did not renew its membership for this long is dead; its shards move. */
  memberTtlMs: ms(300, 10 * 60_000).default(15_000),
  /**
   * An index entry whose managed ledger holds no marker is removed only after
   * it has stayed unchanged this long: longer than a writer takes from
   * writing the entry to writing its marker, so the marker is never left unindexed.
   */
  indexSettleMs: ms(0, HOUR_MS).default(60_000),
  /** Deadline of each metadata call, in ms. */
  metadataDeadlineMs: ms(100, 120_000).default(10_000),
};

export const collectorConfigSchema = z.object(collectorSettings);
export type CollectorConfig = z.output<typeof collectorConfigSchema>;
export type CollectorConfigInput = z.input<typeof collectorConfigSchema>;

/** Fills in defaults; a setting out of its bounds is INVALID_ARGUMENT / INVALID_CONFIG naming it. */
export function resolveCollectorConfig(input: CollectorConfigInput = {}): CollectorConfig {
  const parsed = collectorConfigSchema.safeParse(input);
  if (!parsed.success) {
    throw invalidArgument(
      ErrorReason.INVALID_CONFIG,
      `bad garbage-collector settings: ${z.prettifyError(parsed.error)}`,
    );
  }
  return parsed.data;
}
