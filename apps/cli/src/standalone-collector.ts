import type { Bus } from '@ledgerline/bus';
import {
  garbageCollectorServiceImpl,
  GarbageCollector,
  InProcessCollectorMetadata,
  type CollectorLogger,
} from '@ledgerline/garbage-collector';
import type { LedgerStore } from '@ledgerline/ledger-store';
import type { MetadataAdmin } from '@ledgerline/metadata-service';
import type { MetadataStore } from '@ledgerline/metadata-store';
import { GarbageCollectorService } from '@ledgerline/proto';
import { grpcService, type GrpcServiceRegistration } from '@ledgerline/service-kit';

export interface StandaloneCollector {
  readonly collector: GarbageCollector;
  /** GarbageCollectorService, served on standalone's one port. */
  readonly services: GrpcServiceRegistration[];
  /** Starts collecting once the metadata service (and its admin) is up. */
  start(admin: MetadataAdmin, logger: CollectorLogger): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The garbage collector standalone mode hosts: in the metadata service's
 * process, it reads the store directly and finishes topic deletions through
 * the admin (a cluster collector does both over gRPC), on the in-process bus.
 */
export function standaloneCollector(options: {
  store: MetadataStore;
  ledgerStore: LedgerStore;
  bus: Bus;
}): StandaloneCollector {
  const host: { admin?: MetadataAdmin; logger?: CollectorLogger } = {};
  const collector = new GarbageCollector({
    metadata: new InProcessCollectorMetadata(options.store, (path, version) =>
      host.admin!.finishTopicDeletion(path, version),
    ),
    ledgerStore: options.ledgerStore,
    bus: options.bus,
    instanceId: 'standalone',
    logger: {
      info: (details, message) => host.logger?.info(details, message),
      warn: (details, message) => host.logger?.warn(details, message),
      error: (details, message) => host.logger?.error(details, message),
    },
  });
  return {
    collector,
    services: [grpcService(GarbageCollectorService, garbageCollectorServiceImpl(collector))],
    async start(admin, logger) {
      host.admin = admin;
      host.logger = logger;
      await collector.start();
    },
    stop: () => collector.stop(),
  };
}
