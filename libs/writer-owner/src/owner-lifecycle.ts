import { hostname } from 'node:os';
import { createBus, type Bus } from '@ledgerline/bus';
import { createLedgerStore, type LedgerStore } from '@ledgerline/ledger-store';
import { GrpcManagedLedgerMetadata } from '@ledgerline/managed-ledger';
import { serviceChannel, type Closer, type RunningService, type ServiceConfig } from '@ledgerline/service-kit';
import { redisTarget } from '@ledgerline/storage-kit';
import type { Logger } from 'pino';
import type { OwnerIdentity } from './owner-session.js';

/** What an owner's identity is made from: its settings, and the port it serves on. */
export interface OwnerIdentitySettings {
  instanceId: string;
  ownerGroup: string;
  advertisedAddress: string;
}

/**
 * The identity an owner registers with: the advertised address defaults to
 * localhost and the port; the instance id defaults to role, host and address.
 */
export function ownerIdentity(role: string, settings: OwnerIdentitySettings, port: number): OwnerIdentity {
  const advertisedAddress = settings.advertisedAddress === '' ? `localhost:${port}` : settings.advertisedAddress;
  const derived = `${role}-${hostname()}-${advertisedAddress}`.replace(/[^A-Za-z0-9_.:-]/g, '-').slice(0, 128);
  return {
    instanceId: settings.instanceId === '' ? derived : settings.instanceId,
    group: settings.ownerGroup,
    advertisedAddress,
  };
}

export interface DrainingShutdownOptions {
  owner: { drain(): Promise<void>; readonly logger: Logger };
  service: RunningService;
  /** Signals that drain and stop the service (default SIGTERM and SIGINT; [] for none, as in tests). */
  signals?: readonly NodeJS.Signals[];
  /** Called once a signal-started shutdown is done; defaults to exiting (0 when clean). */
  onSignalShutdown?: (clean: boolean) => void;
}

/**
 * An owner's shutdown: drain first (its topics unloaded, leases released),
 * then stop the server and run the closers; true when all of it was clean.
 * A second signal while stopping exits at once. Calling it again returns the
 * same promise.
 */
export function drainingShutdown(options: DrainingShutdownOptions): (reason?: string) => Promise<boolean> {
  const { owner, service } = options;
  let stopping: Promise<boolean> | undefined;
  const shutdown = (reason = 'requested'): Promise<boolean> =>
    (stopping ??= (async () => {
      await owner.drain().catch((error: unknown) => owner.logger.error({ err: error }, 'drain failed'));
      const report = await service.shutdown(reason);
      for (const signal of signals) process.off(signal, onSignal);
      return !report.forced && report.failedClosers.length === 0;
    })());
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping !== undefined) process.exit(1);
    shutdown(signal).then(options.onSignalShutdown ?? ((clean) => process.exit(clean ? 0 : 1)), (error: unknown) => {
      owner.logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    });
  };
  for (const signal of signals) process.on(signal, onSignal);
  return shutdown;
}

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
  const bus = await createBus({
    kind: 'nats',
    servers: config.natsUrl.split(',').map((server) => server.trim()),
    name: busName,
  });
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
