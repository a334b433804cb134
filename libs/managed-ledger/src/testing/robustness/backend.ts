import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisLedgerStore, SqliteLedgerStore, type LedgerStore } from '@ledgerline/ledger-store';
import { createMetadataStore, type MetadataStore } from '@ledgerline/metadata-store';
import { sharedServers, uniqueNamespace } from '@ledgerline/testing';
import { Registry } from 'prom-client';
import type { ManagedLedgerDependencies } from '../../context.js';
import type { ManagedLedgerMetadata } from '../../metadata/metadata-access.js';
import { MetadataStoreManagedLedgerMetadata } from '../../metadata/metadata-store-managed-ledger-metadata.js';
import { FaultInjectingLedgerStore } from '../fault-injecting-ledger-store.js';
import { FaultInjectingMetadata } from '../fault-injecting-metadata.js';
import { ManualClock, RecordingLogger } from '../fixtures.js';
import { SimulatedProcess } from '../simulated-process.js';

/** One owner process over the shared stores: its own fault injection and its own fate. */
export interface OwnerProcess {
  process: SimulatedProcess;
  ledgerStore: FaultInjectingLedgerStore;
  metadata: FaultInjectingMetadata;
  /** What this process's managed ledgers logged. */
  logger: RecordingLogger;
  deps: ManagedLedgerDependencies;
}

/**
 * The stores every owner process of a run shares (the "servers"), the clock
 * they all read, and what the checks read the truth from: the raw ledger
 * store and metadata, with no fault injection in between.
 */
export interface RobustnessBackend {
  readonly name: string;
  readonly ledgerStore: LedgerStore;
  readonly metadata: ManagedLedgerMetadata;
  readonly clock: ManualClock;
  /** Calls and faults of every owner process, when LEDGERLINE_ROBUSTNESS_TRACE is set. */
  readonly trace: string[] | undefined;
  owner(name: string): OwnerProcess;
  dispose(): Promise<void>;
}

function backendOver(
  name: string,
  ledgerStore: LedgerStore,
  metadataStore: MetadataStore,
  cleanup: () => void,
): RobustnessBackend {
  const metadata = new MetadataStoreManagedLedgerMetadata(metadataStore);
  const clock = new ManualClock();
  const registry = new Registry();
  const trace = process.env['LEDGERLINE_ROBUSTNESS_TRACE'] ? [] : undefined;
  return {
    name,
    trace,
    ledgerStore,
    metadata,
    clock,
    owner: (processName) => {
      const logger = new RecordingLogger();
      const simulated = new SimulatedProcess(processName, trace);
      const faultyStore = new FaultInjectingLedgerStore(ledgerStore, simulated);
      const faultyMetadata = new FaultInjectingMetadata(metadata, simulated);
      return {
        process: simulated,
        ledgerStore: faultyStore,
        metadata: faultyMetadata,
        logger,
        deps: {
          ledgerStore: faultyStore,
          metadata: faultyMetadata,
          clock: clock.now,
          logger,
          metricsRegistry: registry,
        },
      };
    },
    dispose: async () => {
      await ledgerStore.close();
      await metadataStore.close();
      cleanup();
    },
  };
}

/** Both stores in SQLite files of a fresh temporary folder. */
export async function sqliteBackend(): Promise<RobustnessBackend> {
  const folder = mkdtempSync(join(tmpdir(), 'ml-robustness-'));
  const ledgerStore = new SqliteLedgerStore({ path: join(folder, 'ledgers.db'), synchronous: 'NORMAL' });
  const metadataStore = await createMetadataStore({
    kind: 'sqlite',
    path: join(folder, 'metadata.db'),
    synchronous: 'NORMAL',
  });
  return backendOver('sqlite', ledgerStore, metadataStore, () => rmSync(folder, { recursive: true, force: true }));
}

/** Both stores on the test run's shared Redis, under a key prefix of their own. */
export async function redisBackend(): Promise<RobustnessBackend> {
  const keyPrefix = `${uniqueNamespace('ml-robust')}:`;
  const url = sharedServers().redisUrl;
  const ledgerStore = new RedisLedgerStore({ url, keyPrefix });
  const metadataStore = await createMetadataStore({ kind: 'redis', url, keyPrefix });
  return backendOver('redis', ledgerStore, metadataStore, () => undefined);
}
