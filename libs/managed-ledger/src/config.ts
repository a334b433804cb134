import { LedgerlineError, ErrorReason } from '@ledgerline/errors';
import { z } from 'zod';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;
const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

const count = (min: number, max: number) => z.number().int().min(min).max(max);
/** -1 means unlimited (Pulsar's retention convention), 0 means none. */
const retention = z.number().int().min(-1).max(Number.MAX_SAFE_INTEGER);

/**
 * Every bound a managed ledger enforces, with its unit in its name. Defaults
 * follow Pulsar's broker defaults where Pulsar has one.
 */
const managedLedgerConfigSchema = z
  .object({
    /** Roll the ledger over after this many entries (Pulsar managedLedgerMaxEntriesPerLedger). */
    maxEntriesPerLedger: count(1, 10_000_000).default(50_000),
    /** Roll the ledger over after this many stored bytes (Pulsar managedLedgerMaxSizePerLedgerMbytes). */
    maxSizePerLedgerBytes: count(1, Number.MAX_SAFE_INTEGER).default(2 * GiB),
    /** A ledger is never rolled over by entries or size before it is this old (Pulsar's min rollover time). */
    minLedgerAgeMs: count(0, 7 * 24 * HOUR_MS).default(10 * MINUTE_MS),
    /** A ledger holding entries is rolled over once it is this old (Pulsar's max rollover time). */
    maxLedgerAgeMs: count(1, 365 * 24 * HOUR_MS).default(4 * HOUR_MS),
    /** Largest entry accepted, framing included. */
    maxEntrySizeBytes: count(64, 64 * MiB).default(5 * MiB),
    /** Appends accepted but not yet acknowledged; beyond it append is RESOURCE_EXHAUSTED. */
    maxPendingAppends: count(1, 1_000_000).default(10_000),
    /** Bytes of appends accepted but not yet acknowledged. */
    maxPendingAppendBytes: count(1, 16 * GiB).default(256 * MiB),
    /** Most entries in one ledger-store write (group commit). */
    maxWriteBatchEntries: count(1, 100_000).default(1_000),
    /** Most bytes in one ledger-store write. */
    maxWriteBatchBytes: count(1, 1 * GiB).default(8 * MiB),
    /** Attempts to recover from a failed write or ledger creation before pending appends fail. */
    writeRetryMaxAttempts: count(1, 100).default(10),
    writeRetryInitialBackoffMs: count(0, 60_000).default(20),
    writeRetryMaxBackoffMs: count(0, 10 * MINUTE_MS).default(2_000),
    /** Attempts of open when another owner changes the metadata meanwhile. */
    maxOpenAttempts: count(1, 100).default(5),
    /** Bytes of entries kept in memory for tailing readers. */
    entryCacheMaxBytes: count(0, 64 * GiB).default(64 * MiB),
    /** Most entries one read returns. */
    maxReadEntries: count(1, 1_000_000).default(10_000),
    /** Most payload bytes one read returns (at least one entry is always returned). */
    maxReadBytes: count(1, 1 * GiB).default(16 * MiB),
    /** Readers waiting for new entries at once. */
    maxReadWaiters: count(1, 10_000_000).default(100_000),
    /** The sparse offset index keeps one point per this many entries... */
    offsetIndexIntervalEntries: count(1, 10_000).default(64),
    /** ...or per this many bytes, whichever comes first (Kafka's index.interval.bytes). */
    offsetIndexIntervalBytes: count(1, 64 * MiB).default(64 * KiB),
    /** Per-entry message counts of a closed ledger are kept in its LedgerInfo when they encode in this many bytes. */
    maxStoredEntryCountsBytes: count(0, 1 * MiB).default(1 * KiB),
    /** Ledgers whose per-entry offsets are kept in memory (for exact backlogs). */
    maxCachedOffsetTables: count(1, 1_000_000).default(256),
    /** Retention of consumed data: -1 keeps it forever, 0 not at all (Pulsar's RetentionPolicies). */
    retentionTimeMs: retention.default(0),
    retentionSizeBytes: retention.default(0),
    /** How often rollover by age and trimming are checked when the topic is idle; 0 turns the timer off. */
    maintenanceIntervalMs: count(0, HOUR_MS).default(10_000),
    /** Deletable markers ManagedLedgerInfo may hold; trimming pauses (and says so) while the collector is behind. */
    maxDeletableLedgers: count(1, 1_000_000).default(10_000),
    /** Cursors per managed ledger. */
    maxCursors: count(1, 1_000_000).default(10_000),
    /** Cursors recovered at once when the managed ledger opens. */
    cursorRecoveryConcurrency: count(1, 256).default(4),
    cursor: z
      .object({
        /** Cursor snapshots are persisted at most this often (Pulsar's markDeleteRate of 1/s), and on close. */
        snapshotIntervalMs: count(0, HOUR_MS).default(1_000),
        /** The cursor ledger rolls over after this many snapshots... */
        maxSnapshotsPerLedger: count(1, 10_000_000).default(10_000),
        /** ...or when it is this old (Pulsar managedLedgerCursorRolloverTimeInSeconds). */
        maxCursorLedgerAgeMs: count(1, 365 * 24 * HOUR_MS).default(4 * HOUR_MS),
        /** Acknowledged ranges persisted per snapshot; the rest is counted and logged. */
        maxRangesToPersist: count(0, 1_000_000_000).default(10_000_000),
        /** Largest cursor-ledger entry; bigger snapshots are chunked with a footer (PIP-381). */
        snapshotMaxEntrySizeBytes: count(1 * KiB, 64 * MiB).default(1 * MiB),
        /** A snapshot this small lives inline in ManagedCursorInfo while the cursor has no ledger. */
        inlineSnapshotMaxBytes: count(0, 1 * MiB).default(16 * KiB),
        /** Properties per cursor. */
        maxProperties: count(0, 100_000).default(1_000),
        /** Ranges a single ack delta may carry. */
        maxAckDeltaRanges: count(1, 100_000_000).default(1_000_000),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .refine((c) => c.writeRetryMaxBackoffMs >= c.writeRetryInitialBackoffMs, {
    message: 'writeRetryMaxBackoffMs must be at least writeRetryInitialBackoffMs',
  })
  .refine((c) => c.maxLedgerAgeMs >= c.minLedgerAgeMs, {
    message: 'maxLedgerAgeMs must be at least minLedgerAgeMs',
  });

export type ManagedLedgerConfig = z.output<typeof managedLedgerConfigSchema>;
export type ManagedCursorConfig = ManagedLedgerConfig['cursor'];
/** What a caller may pass: any subset, the rest takes defaults. */
export type ManagedLedgerConfigInput = z.input<typeof managedLedgerConfigSchema>;

/** Fills in defaults and checks every bound; bad config is INVALID_ARGUMENT naming the field. */
export function resolveManagedLedgerConfig(input: ManagedLedgerConfigInput = {}): ManagedLedgerConfig {
  const result = managedLedgerConfigSchema.safeParse(input);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.') || '(config)'}: ${i.message}`).join('; ');
    throw new LedgerlineError(
      'INVALID_ARGUMENT',
      ErrorReason.INVALID_CONFIG,
      `invalid managed ledger config: ${problems}`,
    );
  }
  return result.data;
}

export const DEFAULT_MANAGED_LEDGER_CONFIG: ManagedLedgerConfig = resolveManagedLedgerConfig();
