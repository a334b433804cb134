import { mkdirSync } from 'node:fs';
import { resolve, join } from 'node:path';
import { InProcessBus } from '@ledgerline/bus';
import { startMetadataService, type RunningMetadataService, type StandaloneConfig } from '@ledgerline/metadata-service';
import { SqliteMetadataStore } from '@ledgerline/metadata-store';
import { SqliteLedgerStore } from '@ledgerline/ledger-store';
import { standaloneCollector } from './standalone-collector.js';

export interface RunningStandalone {
  readonly dataDir: string;
  readonly grpcPort: number;
  readonly metricsPort: number;
  readonly metadata: RunningMetadataService;
  shutdown(reason?: string): Promise<void>;
}

/**
 * Standalone mode: the services in this process, sharing one in-process bus,
 * with their state in SQLite files under dataDir. Today that is the metadata
 * service (admin, lookup, metadata store API) and the garbage collector on
 * one gRPC port.
 */
export async function startStandalone(
  config: StandaloneConfig,
  options: { signals?: readonly NodeJS.Signals[] } = {},
): Promise<RunningStandalone> {
  const dataDir = resolve(config.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const bus = new InProcessBus();
  const store = new SqliteMetadataStore({ path: join(dataDir, 'metadata.db'), bus });
  const ledgerStore = new SqliteLedgerStore({ path: join(dataDir, 'ledgers.db') });
  const gc = standaloneCollector({ store, ledgerStore, bus });
  const metadata = await startMetadataService({
    store,
    bus,
    config,
    name: 'standalone',
    services: gc.services,
    closers: [
      { name: 'ledger-store', close: () => ledgerStore.close() },
      { name: 'garbage-collector', close: () => gc.stop() },
    ],
    ...(options.signals === undefined ? {} : { signals: options.signals }),
  });
  await gc.start(metadata.admin, metadata.service.logger);
  return {
    dataDir,
    grpcPort: metadata.port,
    metricsPort: metadata.service.metricsPort,
    metadata,
    shutdown: (reason) => metadata.shutdown(reason),
  };
}
