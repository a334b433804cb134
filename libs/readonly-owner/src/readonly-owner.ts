import type { Bus } from '@ledgerline/bus';
import type { LedgerStore } from '@ledgerline/ledger-store';
import type { ManagedLedgerMetadata } from '@ledgerline/managed-ledger';
import { OwnerRole, TopicsService } from '@ledgerline/proto';
import type { ClientOptions } from '@ledgerline/rpc';
import { grpcService, type GrpcServiceRegistration } from '@ledgerline/service-kit';
import {
  exportLoadMetrics,
  LoadMeter,
  OwnerSession,
  type LoadTotals,
  type MetadataClients,
  type OwnerIdentity,
} from '@ledgerline/ownership';
import type { Logger } from 'pino';
import { register as defaultRegistry, type Counter, type Registry } from 'prom-client';
import type { ReadOnlySettings } from './config.js';
import { readOnlyMetrics, type ReadOnlyMetrics } from './metrics.js';
import type { ReadOnlyTopic } from './readonly-topic.js';
import { ReadOnlyRegistry, notServing } from './topic-registry.js';
import { readOnlyTopicsServiceImpl } from './topics-service.js';
import { WriterClients } from './writer-clients.js';

export interface ReadOnlyOwnerOptions {
  settings: ReadOnlySettings;
  identity: OwnerIdentity;
  clients: MetadataClients;
  /** The writer's ledger store, read only. */
  ledgerStore: LedgerStore;
  /** ManagedLedgerInfo: over gRPC in a cluster. Only read. */
  metadata: Pick<ManagedLedgerMetadata, 'getManagedLedgerInfo'>;
  bus?: Bus;
  logger: Logger;
  metricsRegistry?: Registry;
  /** How to reach writer owners' CursorsService and TopicsService; default plaintext. */
  writerClientOptions?: () => ClientOptions;
}

/**
 * The read-only owner (PIP-63): registers with role READONLY in its owner
 * group, serves the topics of the reader namespaces that group is given (by
 * lease, like the writer owner), reads the writer's ledgers directly, and
 * keeps no cursor of its own: every cursor change goes to the writer owner's
 * CursorsService. Hosted by apps/readonly-owner and by standalone.
 */
export class ReadOnlyOwner {
  readonly settings: ReadOnlySettings;
  readonly identity: OwnerIdentity;
  readonly clients: MetadataClients;
  readonly logger: Logger;
  readonly metrics: ReadOnlyMetrics;
  readonly registry: ReadOnlyRegistry;
  readonly writer: WriterClients;
  /** The load this owner reports with its keep-alive (and exports as metrics). */
  readonly load: LoadMeter;
  private readonly session: OwnerSession;
  private draining: Promise<void> | undefined;

  constructor(options: ReadOnlyOwnerOptions) {
    this.settings = options.settings;
    this.identity = options.identity;
    this.clients = options.clients;
    this.logger = options.logger;
    this.metrics = readOnlyMetrics(options.metricsRegistry);
    this.load = new LoadMeter(() => this.loadTotals());
    exportLoadMetrics(options.metricsRegistry ?? defaultRegistry, 'readonly', this.load);
    this.writer = new WriterClients(
      () => options.clients.lookup,
      options.settings.writerCallTimeoutMs,
      options.writerClientOptions,
    );
    this.session = new OwnerSession({
      clients: options.clients,
      identity: options.identity,
      ttlMs: options.settings.leaseTtlMs,
      role: OwnerRole.READONLY,
      logger: options.logger,
      load: this.load,
      onLost: () => {
        this.registry
          .unloadAll('owner session lost', false)
          .catch((error: unknown) => this.logger.warn({ err: String(error) }, 'unloading after a lost session failed'));
      },
    });
    this.registry = new ReadOnlyRegistry({
      clients: options.clients,
      session: this.session,
      identity: options.identity,
      settings: options.settings,
      ledgerStore: options.ledgerStore,
      metadata: options.metadata,
      bus: options.bus,
      writer: this.writer,
      observeLacPropagationMs: (ms) => this.metrics.lacPropagation.observe(ms / 1000),
      logger: options.logger,
    });
  }

  async start(): Promise<void> {
    await this.session.start();
    this.registry.start();
    this.logger.info(
      { instanceId: this.identity.instanceId, address: this.identity.advertisedAddress, group: this.identity.group },
      'read-only owner serving',
    );
  }

  /** The topic a request names (its reader or its writer name), loaded here when this instance serves it. */
  async topic(name: string): Promise<ReadOnlyTopic> {
    if (this.draining !== undefined) throw notServing();
    const topic = await this.registry.get(name);
    this.metrics.topicsLoaded.set(this.registry.all().length);
    return topic;
  }

  /** A read-only owner stores nothing: its load is what it delivers, to how many consumers, over how many topics. */
  private async loadTotals(): Promise<LoadTotals> {
    return {
      messagesIn: 0,
      bytesIn: 0,
      messagesOut: await total(this.metrics.messagesOut),
      bytesOut: await total(this.metrics.bytesOut),
      topicsOwned: this.registry.all().length,
      pendingEntries: 0,
    };
  }

  services(): GrpcServiceRegistration[] {
    return [grpcService(TopicsService, readOnlyTopicsServiceImpl(this))];
  }

  /** SIGTERM: unload every topic (unsent acks go to the writer) and release its lease, then end the session. */
  drain(): Promise<void> {
    this.draining ??= (async () => {
      this.logger.info({}, 'draining: releasing every topic');
      this.registry.stop();
      await this.registry.unloadAll('the owner is shutting down', true);
      await this.session.stop();
      this.writer.close();
    })();
    return this.draining;
  }
}

/** A counter's total over every label (topics): it never goes down when a topic unloads. */
async function total(counter: Counter<'topic'>): Promise<number> {
  return (await counter.get()).values.reduce((sum, value) => sum + value.value, 0);
}
