import { clusterBusConfig, createBus, type Bus } from '@ledgerline/bus';
import { createLedgerStore, type LedgerStore } from '@ledgerline/ledger-store';
import { GrpcManagedLedgerMetadata } from '@ledgerline/managed-ledger';
import { serviceChannel, type Closer, type ServiceConfig } from '@ledgerline/service-kit';
import { redisTarget } from '@ledgerline/storage-kit';

/** What an owner process in a cluster reaches: the settings both owners read for it. */
export interface OwnerBackendSettings extends ServiceConfig {
  natsUrl: string;
  redisUrl: string;
  redisKeyPrefix: string;
  metadataAddress: string;
}

/** An owner's connections in a cluster, and the closers that end them (after the server stopped). */
export interface OwnerBackends {
  bus: Bus;
  ledgerStore: LedgerStore;
  metadata: GrpcManagedLedgerMetadata;
  closers: Closer[];
}

/**
 * NATS, the ledger Redis (one node, or a Cluster's nodes) and the metadata
 * service's managed-ledger API, as both owners use them in a cluster. With
 * mutual TLS the owner's certificate is its identity to the metadata
 * service's internal APIs.
 */
export async function connectOwnerBackends(config: OwnerBackendSettings, busName: string): Promise<OwnerBackends> {
  const bus = await createBus(clusterBusConfig(config.natsUrl, busName));
  const ledgerStore = createLedgerStore({
    kind: 'redis',
    ...redisTarget(config.redisUrl),
    keyPrefix: config.redisKeyPrefix,
  });
  const channel = serviceChannel(config);
  const metadata = GrpcManagedLedgerMetadata.connect(config.metadataAddress, channel.settings);
  return {
    bus,
    ledgerStore,
    metadata,
    closers: [
      { name: 'bus', close: () => bus.close() },
      { name: 'ledger-store', close: () => ledgerStore.close() },
      { name: 'metadata', close: () => metadata.close() },
      { name: 'tls-files', close: () => channel.close() },
    ],
  };
}
