import { mkdirSync } from 'node:fs';
import { resolve, join } from 'node:path';
import { InProcessBus } from '@ledgerline/bus';
import { SqliteLedgerStore } from '@ledgerline/ledger-store';
import { MetadataStoreManagedLedgerMetadata } from '@ledgerline/managed-ledger';
import {
  MetadataAdmin,
  MetadataMaintenance,
  metadataServices,
  standaloneConfigSchema,
  storePolicySource,
} from '@ledgerline/metadata-service';
import { SqliteMetadataStore } from '@ledgerline/metadata-store';
import {
  consumeBackend,
  startWriterOwnerService,
  writerSettings,
  type RunningWriterOwner,
} from '@ledgerline/writer-owner';
import type { z } from 'zod';
import { standaloneCollector } from './standalone-collector.js';

/** Standalone settings: the metadata service's and the writer owner's, one process, one port. */
export const standaloneServerConfigSchema = standaloneConfigSchema.extend(writerSettings);
export type StandaloneServerConfig = z.output<typeof standaloneServerConfigSchema>;

export interface RunningStandalone {
  readonly dataDir: string;
  readonly grpcPort: number;
  readonly metricsPort: number;
  readonly admin: MetadataAdmin;
  readonly writer: RunningWriterOwner;
  shutdown(reason?: string): Promise<void>;
}

/**
 * Standalone mode: the metadata service (admin, lookup, metadata store API),
 * a writer owner (produce, consume, cursors, offsets) and the garbage
 * collector in this process, on one gRPC port, with their state in SQLite
 * files under dataDir and one in-process bus. The writer reaches the lookup
 * API over loopback like any owner; its managed ledgers and the collector use
 * the metadata store directly.
 */
export async function startStandalone(
  config: StandaloneServerConfig,
  options: { signals?: readonly NodeJS.Signals[] } = {},
): Promise<RunningStandalone> {
  const dataDir = resolve(config.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const bus = new InProcessBus();
  const store = new SqliteMetadataStore({ path: join(dataDir, 'metadata.db'), bus });
  const ledgerStore = new SqliteLedgerStore({ path: join(dataDir, 'ledgers.db') });
  const admin: MetadataAdmin = new MetadataAdmin(store, {
    bus,
    recountSettleMs: config.recountSettleMs,
    onCountDrift: (namespace) => maintenance.suspect(namespace),
  });
  const maintenance = new MetadataMaintenance(admin.context, config);
  const gc = standaloneCollector({ store, ledgerStore, bus });
  let writer: RunningWriterOwner;
  try {
    writer = await startWriterOwnerService({
      name: 'standalone',
      config,
      settings: config,
      ledgerStore,
      metadata: new MetadataStoreManagedLedgerMetadata(store),
      bus,
      consumeBackend,
      extraServices: [...metadataServices(admin, store, bus), ...gc.services],
      authorizationPolicies: storePolicySource(admin.context),
      ...(options.signals === undefined ? {} : { signals: options.signals }),
      closers: [
        { name: 'garbage-collector', close: () => gc.stop() },
        { name: 'bus', close: () => bus.close() },
        { name: 'metadata-store', close: () => store.close() },
        { name: 'ledger-store', close: () => ledgerStore.close() },
        { name: 'maintenance', close: () => maintenance.stop() },
      ],
    });
  } catch (error) {
    await ledgerStore.close().catch(() => undefined);
    await store.close().catch(() => undefined);
    await bus.close().catch(() => undefined);
    throw error;
  }
  maintenance.start(writer.service.logger);
  await gc.start(admin, writer.service.logger);
  return {
    dataDir,
    grpcPort: writer.port,
    metricsPort: writer.service.metricsPort,
    admin,
    writer,
    async shutdown(reason) {
      await writer.shutdown(reason);
    },
  };
}
