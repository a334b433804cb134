import { ManagedLedger, type ManagedLedgerConfigInput } from '@ledgerline/managed-ledger';
import type { TestBackends } from '@ledgerline/managed-ledger/testing';
import { Registry } from 'prom-client';
import { Deduplication, type DedupSettings } from '../deduplication.js';
import { LacNotifier } from '../lac-notifier.js';
import { writerMetrics } from '../metrics.js';
import { OwnedTopic } from '../owned-topic.js';

/** Deduplication settings for topic specs: room for every producer, no snapshot or expiry within a test. */
export const TEST_DEDUP_SETTINGS: DedupSettings = {
  maxProducers: 100,
  producerInactivityMs: 3_600_000,
  snapshotIntervalEntries: 1_000,
  snapshotIntervalMs: 120_000,
};

/** Few and short write retries, so the managed ledger gives up on a store that stays away within a test. */
export const SHORT_WRITE_RETRIES: ManagedLedgerConfigInput = {
  writeRetryMaxAttempts: 3,
  writeRetryInitialBackoffMs: 1,
  writeRetryMaxBackoffMs: 2,
};

/**
 * A topic as the writer owner holds it (managed ledger, recovered deduplication), over the given
 * test backends and their hand-moved clock, without a server around it.
 */
export async function openTestTopic(
  topic: string,
  backends: TestBackends,
  settings: DedupSettings,
  ledgerConfig: ManagedLedgerConfigInput = {},
  maxPendingBytes = 1024 * 1024,
): Promise<OwnedTopic> {
  const ledger = await ManagedLedger.open(topic, backends.deps(), { config: ledgerConfig });
  const dedup = await Deduplication.recover(ledger, settings, backends.clock.now);
  return new OwnedTopic({
    name: topic,
    ledger,
    dedup,
    lac: new LacNotifier(undefined),
    metrics: writerMetrics(new Registry()),
    maxPendingBytes,
    maxPendingEntries: 100,
    maxMessageSizeBytes: 64 * 1024,
    now: backends.clock.now,
    closeLedger: () => ledger.close(),
    onUnloaded: () => undefined,
    onOwnershipLost: () => undefined,
  });
}
