import type { Bus } from '@ledgerline/bus';
import type { LedgerStore } from '@ledgerline/ledger-store';
import type { ManagedLedgerMetadata } from '@ledgerline/managed-ledger';
import {
  connectOwnerBackends,
  drainingShutdown,
  lateMetadataClients,
  ownerIdentity,
  type OwnerIdentity,
} from '@ledgerline/ownership';
import { grpcPolicySource, type PolicySource } from '@ledgerline/security';
import {
  createLogger,
  createMetrics,
  serve,
  type Closer,
  type GrpcServiceRegistration,
  type RunningService,
  type ServiceConfig,
} from '@ledgerline/service-kit';
import type { Logger } from 'pino';
import type { WriterClusterConfig, WriterSettings } from './config.js';
import { WriterOwner, type WriterOwnerOptions } from './writer-owner.js';

export interface WriterOwnerServiceOptions {
  name?: string;
  config: ServiceConfig;
  settings: WriterSettings;
  /** The metadata service's address; undefined means this very server (standalone hosts both). */
  metadataAddress?: string;
  ledgerStore: LedgerStore;
  metadata: ManagedLedgerMetadata;
  bus?: Bus;
  consumeBackend: WriterOwnerOptions['consumeBackend'];
  /** More services on the same port (standalone: the metadata service). */
  extraServices?: readonly GrpcServiceRegistration[];
  /**
   * Where permissions are read when authentication is on. Default: the
   * metadata service's GetPermissions over the metadata clients; standalone,
   * which hosts the metadata service, reads its store instead.
   */
  authorizationPolicies?: PolicySource;
  closers?: readonly Closer[];
  logger?: Logger;
  /** Signals that drain and stop the service (default SIGTERM and SIGINT; [] for none, as in tests). */
  signals?: readonly NodeJS.Signals[];
  /** Called once a signal-started shutdown is done; defaults to exiting (0 when clean). */
  onSignalShutdown?: (clean: boolean) => void;
}

export interface RunningWriterOwner {
  readonly owner: WriterOwner;
  readonly service: RunningService;
  readonly port: number;
  /** Drains the writer owner (topics handed over, leases released), then stops the server. */
  shutdown(reason?: string): Promise<boolean>;
}

/** Clients whose channel is chosen once the server's port is known (standalone talks to itself). */
/**
 * Runs a writer owner: TopicsService and CursorsService (and any extra
 * services) on one gRPC port with health, reflection and /metrics. SIGTERM
 * drains first (publish streams answer and end, topics are unloaded and their
 * leases released), then the server stops and the closers run.
 */
export async function startWriterOwnerService(options: WriterOwnerServiceOptions): Promise<RunningWriterOwner> {
  const late = lateMetadataClients();
  // Filled in once the port is known; the owner serves nothing before start().
  const identity: OwnerIdentity = { instanceId: '', group: options.settings.ownerGroup, advertisedAddress: '' };
  const logger = options.logger;
  const metrics = createMetrics(options.name ?? 'writer-owner');
  const owner = new WriterOwner({
    metricsRegistry: metrics.registry,
    settings: options.settings,
    identity,
    clients: late.clients,
    ledgerStore: options.ledgerStore,
    metadata: options.metadata,
    ...(options.bus === undefined ? {} : { bus: options.bus }),
    logger:
      logger ??
      createLogger(options.name ?? 'writer-owner', {
        level: options.config.logLevel,
        format: options.config.logFormat,
      }),
    consumeBackend: options.consumeBackend,
  });
  const service = await serve({
    name: options.name ?? 'writer-owner',
    config: options.config,
    services: [...(options.extraServices ?? []), ...owner.services()],
    authorizationPolicies: options.authorizationPolicies ?? grpcPolicySource(() => late.clients.admin),
    logger: owner.logger,
    metrics,
    signals: [],
    closers: options.closers ?? [],
  });
  // The service's own TLS settings: with mutual TLS its certificate is its identity to the metadata service;
  // calls to its own port (standalone) carry the process's secret instead.
  const disconnect =
    options.metadataAddress === undefined
      ? late.connect(`localhost:${service.grpcPort}`, service.selfClientOptions)
      : late.connect(options.metadataAddress, service.channelSettings);
  service.addCloser({ name: 'metadata-clients', close: disconnect });
  // Transfers call the target owner with the same identity as calls to the metadata service.
  owner.peers.connect(options.metadataAddress === undefined ? service.selfClientOptions : service.channelSettings);
  service.addCloser({ name: 'peer-owners', close: () => owner.peers.close() });
  Object.assign(identity, ownerIdentity('writer', options.settings, service.grpcPort));
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

export async function startClusterWriterOwner(
  config: WriterClusterConfig,
  options: Pick<WriterOwnerServiceOptions, 'signals' | 'logger' | 'name' | 'consumeBackend'>,
): Promise<RunningWriterOwner> {
  const { bus, ledgerStore, metadata, closers } = await connectOwnerBackends(config, 'ledgerline-writer-owner');
  return startWriterOwnerService({
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
