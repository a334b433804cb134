import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteLedgerStore } from '@ledgerline/ledger-store';
import { MetadataStoreManagedLedgerMetadata } from '@ledgerline/managed-ledger';
import { MetadataAdmin } from '@ledgerline/metadata-service';
import { SqliteMetadataStore } from '@ledgerline/metadata-store';
import { GarbageCollector, type GarbageCollectorOptions } from '../collector.js';
import type { CollectorConfigInput } from '../config.js';
import { InProcessCollectorMetadata } from '../store-collector-metadata.js';
import { FailingDeletes } from './failing-deletes.js';

/** Test settings: no timers worth waiting for, no grace, no settle time. */
export const TEST_COLLECTOR_CONFIG: CollectorConfigInput = {
  gcIntervalMs: 3_600_000,
  orphanSweepIntervalMs: 3_600_000,
  fullScanMinGapMs: 0,
  indexSettleMs: 0,
  orphanGraceMs: 0,
  retryBaseDelayMs: 1,
  retryMaxDelayMs: 1,
  memberTtlMs: 300,
};

export interface CollectorFixture {
  dir: string;
  metadataStore: SqliteMetadataStore;
  ledgerStore: FailingDeletes;
  admin: MetadataAdmin;
  mlMetadata: MetadataStoreManagedLedgerMetadata;
  collector(options?: Partial<GarbageCollectorOptions>): GarbageCollector;
  close(): Promise<void>;
}

/** SQLite metadata and ledgers in a temporary directory, the admin over them, and collectors in this process. */
export function collectorFixture(): CollectorFixture {
  const dir = mkdtempSync(join(tmpdir(), 'ledgerline-gc-'));
  const metadataStore = new SqliteMetadataStore({ path: join(dir, 'metadata.db'), synchronous: 'NORMAL' });
  const ledgerStore = new FailingDeletes(
    new SqliteLedgerStore({ path: join(dir, 'ledgers.db'), synchronous: 'NORMAL' }),
  );
  const admin = new MetadataAdmin(metadataStore, { recountSettleMs: 0 });
  const collectors: GarbageCollector[] = [];
  return {
    dir,
    metadataStore,
    ledgerStore,
    admin,
    mlMetadata: new MetadataStoreManagedLedgerMetadata(metadataStore),
    collector(options = {}) {
      const collector = new GarbageCollector({
        metadata: new InProcessCollectorMetadata(metadataStore, (path, version) =>
          admin.finishTopicDeletion(path, version),
        ),
        ledgerStore,
        config: TEST_COLLECTOR_CONFIG,
        ...options,
      });
      collectors.push(collector);
      return collector;
    },
    async close() {
      for (const collector of collectors) await collector.stop();
      await ledgerStore.close();
      await metadataStore.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
