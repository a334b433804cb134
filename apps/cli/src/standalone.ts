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
import {
  resolveReadOnlySettings,
  startReadOnlyOwnerService,
  type RunningReadOnlyOwner,
} from '@ledgerline/readonly-owner';
import { z } from 'zod';
import { standaloneCollector } from './standalone-collector.js';

/**
 * Standalone settings: the metadata service's and the writer owner's on one
 * port, and the read-only owner's (PIP-63) on a second one, since it serves
 * TopicsService too.
 */
export const standaloneServerConfigSchema = standaloneConfigSchema.extend({
  ...writerSettings,
  /** The read-only owner's gRPC port (0: any free port). */
  readOnlyGrpcPort: z.number().int().min(0).max(65_535).default(6652),
  /** The owner group the read-only owner serves: give it to a reader namespace (`namespaces create --owner-group`). */
  readOnlyOwnerGroup: z.string().min(1).max(128).default('readers'),
});
export type StandaloneServerConfig = z.output<typeof standaloneServerConfigSchema>;

export interface RunningStandalone {
  readonly dataDir: string;
  readonly grpcPort: number;
  readonly metricsPort: number;
  readonly admin: MetadataAdmin;
  readonly writer: RunningWriterOwner;
  readonly readOnly: RunningReadOnlyOwner;
  shutdown(reason?: string): Promise<void>;
}

/**
 * Standalone mode: the metadata service (admin, lookup, metadata store API),
 * a writer owner (produce, consume, cursors, offsets) and the garbage
 * collector in this process, on one gRPC port, and a read-only owner (PIP-63,
 * group `readOnlyOwnerGroup`) on `readOnlyGrpcPort`, with their state in SQLite
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
  // Started after the writer (it reaches lookup over the writer's port); stopped before the stores close.
  const hosted: { readOnly?: RunningReadOnlyOwner } = {};
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
        {
          name: 'readonly-owner',
          close: async () => {
            await hosted.readOnly?.shutdown('standalone stopping');
          },
        },
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
  let readOnly: RunningReadOnlyOwner;
  try {
    readOnly = await startReadOnlyOwnerService({
      name: 'standalone-readonly',
      config: { ...config, grpcPort: config.readOnlyGrpcPort, metricsPort: 0 },
      settings: resolveReadOnlySettings({ ownerGroup: config.readOnlyOwnerGroup, leaseTtlMs: config.leaseTtlMs }),
      metadataAddress: `localhost:${writer.port}`,
      // Metadata is served on the writer's port: the read-only owner calls it as this process does.
      metadataClientOptions: writer.service.selfClientOptions,
      authorizationPolicies: storePolicySource(admin.context),
      ledgerStore,
      metadata: new MetadataStoreManagedLedgerMetadata(store),
      bus,
      logger: writer.service.logger,
      signals: [],
    });
    hosted.readOnly = readOnly;
  } catch (error) {
    await writer.shutdown('the read-only owner did not start');
    throw error;
  }
  return {
    dataDir,
    grpcPort: writer.port,
    metricsPort: writer.service.metricsPort,
    admin,
    writer,
    readOnly,
    async shutdown(reason) {
      // The read-only owner first: its last acks go to the writer owner, which must still be there.
      await readOnly.shutdown(reason);
      await writer.shutdown(reason);
    },
  };
}
