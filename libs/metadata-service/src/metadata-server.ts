import type { Bus } from '@ledgerline/bus';
import type { MetadataStore } from '@ledgerline/metadata-store';
import { AdminService, LookupService, MetadataStoreService } from '@ledgerline/proto';
import {
  grpcService,
  serve,
  type Closer,
  type GrpcServiceRegistration,
  type RunningService,
  type ServiceConfig,
} from '@ledgerline/service-kit';
import type { Logger } from 'pino';
import { adminServiceImpl } from './admin-service.js';
import type { BalancerConfig, MaintenanceConfig } from './config.js';
import { Balancer } from './coordination/balancer.js';
import { lookupServiceImpl } from './lookup-service.js';
import { MetadataMaintenance } from './maintenance.js';
import { MetadataAdmin } from './metadata-admin.js';
import { metadataStoreServiceImpl } from './store-api/metadata-store-service.js';
import { storePolicySource } from './admin/permissions.js';
import type { UnreachableOwnerSettings } from './coordination/unreachable-owners.js';

/** The three gRPC services of the metadata service over one admin, store and bus. */
export function metadataServices(admin: MetadataAdmin, store: MetadataStore, bus: Bus): GrpcServiceRegistration[] {
  return [
    grpcService(AdminService, adminServiceImpl(admin)),
    grpcService(LookupService, lookupServiceImpl(admin)),
    grpcService(MetadataStoreService, metadataStoreServiceImpl(store, bus)),
  ];
}

export interface MetadataServiceOptions {
  store: MetadataStore;
  bus: Bus;
  /** The balancer's settings are optional here: those not given take their defaults (config.ts). */
  config: ServiceConfig & MaintenanceConfig & Partial<BalancerConfig> & Partial<UnreachableOwnerSettings>;
  /** The name in logs and metrics; default 'metadata'. */
  name?: string;
  logger?: Logger;
  /** More gRPC services on the same port (standalone mode hosts every service in one process). */
  services?: readonly GrpcServiceRegistration[];
  /** Closed after the store and bus at shutdown (newest first), e.g. files to release. */
  closers?: readonly Closer[];
  /** Signals that start a graceful shutdown (default SIGTERM and SIGINT; [] for none, as in tests). */
  signals?: readonly NodeJS.Signals[];
  onSignalShutdown?: Parameters<typeof serve>[0]['onSignalShutdown'];
}

export interface RunningMetadataService {
  readonly admin: MetadataAdmin;
  readonly service: RunningService;
  readonly port: number;
  shutdown(reason?: string): Promise<void>;
}

/**
 * Runs the metadata service: AdminService, LookupService and
 * MetadataStoreService on one gRPC port (with health and reflection), metrics
 * over HTTP, the background maintenance, and a graceful shutdown that drains
 * calls, stops maintenance, then closes the store and the bus.
 */
export async function startMetadataService(options: MetadataServiceOptions): Promise<RunningMetadataService> {
  const { store, bus, config } = options;
  const admin: MetadataAdmin = new MetadataAdmin(store, {
    bus,
    recountSettleMs: config.recountSettleMs,
    onCountDrift: (namespace) => maintenance.suspect(namespace),
    unreachableOwners: settingsOf<UnreachableOwnerSettings>(config, 'unreachableOwner'),
  });
  const maintenance = new MetadataMaintenance(admin.context, config);
  const balancer = new Balancer(
    admin.context,
    settingsOf<BalancerConfig>(config, 'balancer'),
    undefined,
    admin.ownerControls,
  );
  const service = await serve({
    name: options.name ?? 'metadata',
    config,
    services: [...metadataServices(admin, store, bus), ...(options.services ?? [])],
    authorizationPolicies: storePolicySource(admin.context),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.signals === undefined ? {} : { signals: options.signals }),
    ...(options.onSignalShutdown === undefined ? {} : { onSignalShutdown: options.onSignalShutdown }),
    closers: [
      ...(options.closers ?? []),
      { name: 'bus', close: () => bus.close() },
      { name: 'metadata-store', close: () => store.close() },
      { name: 'maintenance', close: () => maintenance.stop() },
      { name: 'balancer', close: () => balancer.stop() },
      { name: 'session-liveness', close: () => admin.sessionLiveness.close() },
    ],
  });
  admin.sessionLiveness.logger = service.logger;
  maintenance.start(service.logger);
  balancer.logger = service.logger;
  // The balancer and the unreachable-owner moves call owners as this service: with mutual TLS, its own certificate.
  admin.ownerControls.clientOptions = service.channelSettings;
  admin.unreachableOwners.logger = service.logger;
  balancer.start();
  return {
    admin,
    service,
    port: service.grpcPort,
    async shutdown(reason) {
      await service.shutdown(reason);
    },
  };
}

/** The settings of `config` whose names start with `prefix` and that are set (so an unset one keeps its default). */
function settingsOf<T extends object>(config: object, prefix: string): Partial<T> {
  const picked: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    if (key.startsWith(prefix) && value !== undefined) picked[key] = value;
  }
  return picked as Partial<T>;
}
