import type { Bus } from '@ledgerline/bus';
import { LedgerlineError } from '@ledgerline/errors';
import type { LedgerStore } from '@ledgerline/ledger-store';
import type { ManagedLedgerMetadata } from '@ledgerline/managed-ledger';
import type { ClientOptions } from '@ledgerline/rpc';
import { grpcPolicySource, type PolicySource } from '@ledgerline/security';
import {
  createLogger,
  createMetrics,
  serve,
  type Closer,
  type RunningService,
  type ServiceConfig,
} from '@ledgerline/service-kit';
import {
  connectOwnerBackends,
  drainingShutdown,
  lateMetadataClients,
  ownerIdentity,
  OwnerReason,
  type OwnerIdentity,
} from '@ledgerline/ownership';
import type { Logger } from 'pino';
import type { ReadOnlyClusterConfig, ReadOnlySettings } from './config.js';
import { ReadOnlyOwner } from './readonly-owner.js';

export interface ReadOnlyOwnerServiceOptions {
  name?: string;
  config: ServiceConfig;
  settings: ReadOnlySettings;
  /** The metadata service's address. */
  metadataAddress: string;
  /**
   * How to call it; default the service's own channel settings (its certificate under mutual TLS).
   * Standalone passes its writer's self-client options: there metadata is served on the writer's port.
   */
  metadataClientOptions?: ClientOptions;
  /** Where namespace permissions come from when authentication is on; default the metadata service over gRPC. */
  authorizationPolicies?: PolicySource;
  ledgerStore: LedgerStore;
  metadata: Pick<ManagedLedgerMetadata, 'getManagedLedgerInfo'>;
  bus?: Bus;
  closers?: readonly Closer[];
  logger?: Logger;
  /** Signals that drain and stop the service (default SIGTERM and SIGINT; [] for none, as in tests). */
  signals?: readonly NodeJS.Signals[];
  /** Called once a signal-started shutdown is done; defaults to exiting (0 when clean). */
  onSignalShutdown?: (clean: boolean) => void;
}

export interface RunningReadOnlyOwner {
  readonly owner: ReadOnlyOwner;
  readonly service: RunningService;
  readonly port: number;
  /** Drains (topics unloaded, unsent acks sent, leases released), then stops the server. */
  shutdown(reason?: string): Promise<boolean>;
}

/**
 * Runs a read-only owner: TopicsService (consume side) on its own gRPC port
 * with health, reflection and /metrics. SIGTERM drains first (topics
 * unloaded, acks taken here sent to the writer, leases released), then the
 * server stops and the closers run.
 */
export async function startReadOnlyOwnerService(options: ReadOnlyOwnerServiceOptions): Promise<RunningReadOnlyOwner> {
  const name = options.name ?? 'readonly-owner';
  const metrics = createMetrics(name);
  const metadata = lateMetadataClients();
  // Known once the server runs: the service's own TLS settings, or those standalone gives.
  let peerOptions: ClientOptions = {};
  // Filled in once the port is known; the owner registers nothing before start().
  const identity: OwnerIdentity = { instanceId: '', group: options.settings.ownerGroup, advertisedAddress: '' };
  const owner = new ReadOnlyOwner({
    metricsRegistry: metrics.registry,
    settings: options.settings,
    identity,
    clients: metadata.clients,
    ledgerStore: options.ledgerStore,
    metadata: options.metadata,
    ...(options.bus === undefined ? {} : { bus: options.bus }),
    logger: options.logger ?? createLogger(name, { level: options.config.logLevel, format: options.config.logFormat }),
    writerClientOptions: () => peerOptions,
  });
  const service = await serve({
    name,
    config: options.config,
    services: owner.services(),
    authorizationPolicies: options.authorizationPolicies ?? grpcPolicySource(() => metadata.clients.admin),
    logger: owner.logger,
    metrics,
    signals: [],
    closers: options.closers ?? [],
  });
  peerOptions = options.metadataClientOptions ?? service.channelSettings;
  owner.peers.connect(peerOptions);
  const disconnect = metadata.connect(options.metadataAddress, peerOptions);
  service.addCloser({ name: 'metadata-clients', close: disconnect });
  Object.assign(identity, ownerIdentity('readonly', options.settings, service.grpcPort));
  try {
    await owner.start();
  } catch (error) {
    await service.shutdown('start failed');
    throw error;
  }
  const shutdown = drainingShutdown({
    owner,
    service,
    ...(options.signals === undefined ? {} : { signals: options.signals }),
    ...(options.onSignalShutdown === undefined ? {} : { onSignalShutdown: options.onSignalShutdown }),
  });
  return { owner, service, port: service.grpcPort, shutdown };
}

/** The cluster entry: the writer's Redis ledger store (read only), NATS, metadata over gRPC. */
export async function startClusterReadOnlyOwner(
  config: ReadOnlyClusterConfig,
  options: Pick<ReadOnlyOwnerServiceOptions, 'signals' | 'logger' | 'name'> = {},
): Promise<RunningReadOnlyOwner> {
  if (config.metadataAddress === '') {
    throw new LedgerlineError('INVALID_ARGUMENT', OwnerReason.INVALID_REQUEST, 'give the metadata service address');
  }
  const { bus, ledgerStore, metadata, closers } = await connectOwnerBackends(config, 'ledgerline-readonly-owner');
  return startReadOnlyOwnerService({
    ...options,
    config,
    settings: config,
    metadataAddress: config.metadataAddress,
    ledgerStore,
    metadata,
    bus,
    closers,
  });
}
