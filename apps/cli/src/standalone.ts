import { mkdirSync } from 'node:fs';
import { resolve, join } from 'node:path';
import { InProcessBus } from '@ledgerline/bus';
import { startMetadataService, type RunningMetadataService, type StandaloneConfig } from '@ledgerline/metadata-service';
import { SqliteMetadataStore } from '@ledgerline/metadata-store';

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
 * service (admin, lookup, metadata store API) on one gRPC port.
 */
export async function startStandalone(
  config: StandaloneConfig,
  options: { signals?: readonly NodeJS.Signals[] } = {},
): Promise<RunningStandalone> {
  const dataDir = resolve(config.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const bus = new InProcessBus();
  const store = new SqliteMetadataStore({ path: join(dataDir, 'metadata.db'), bus });
  const metadata = await startMetadataService({
    store,
    bus,
    config,
    name: 'standalone',
    ...(options.signals === undefined ? {} : { signals: options.signals }),
  });
  return {
    dataDir,
    grpcPort: metadata.port,
    metricsPort: metadata.service.metricsPort,
    metadata,
    shutdown: (reason) => metadata.shutdown(reason),
  };
}
