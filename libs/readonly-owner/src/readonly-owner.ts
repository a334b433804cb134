import type { Bus } from '@ledgerline/bus';
import type { LedgerStore } from '@ledgerline/ledger-store';
import type { ManagedLedgerMetadata } from '@ledgerline/managed-ledger';
import { LedgerlineError } from '@ledgerline/errors';
import { OwnerControlService, OwnerRole, TopicsService } from '@ledgerline/proto';
import type { ClientOptions } from '@ledgerline/rpc';
import { grpcService, type GrpcServiceRegistration } from '@ledgerline/service-kit';
import {
  exportLoadMetrics,
  LoadMeter,
  notOwner,
  OwnerSession,
  PeerOwners,
  trafficTotals,
  type LoadTotals,
  type MetadataClients,
  type OwnerIdentity,
} from '@ledgerline/ownership';
import type { Logger } from 'pino';
import { register as defaultRegistry, type Registry } from 'prom-client';
import type { ReadOnlySettings } from './config.js';
import { readOnlyMetrics, type ReadOnlyMetrics } from './metrics.js';
import type { ReadOnlyTopic } from './readonly-topic.js';
import { ReadOnlyRegistry, notServing } from './topic-registry.js';
import { readOnlyTopicsServiceImpl } from './topics-service.js';
import { ReadOnlyOwnerReason } from './reasons.js';
import { drainReadOnly, transferReadOnlyTopic, type ReadOnlyTransferOutcome } from './readonly-transfer.js';
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
  /** Channels to other read-only owners: a transfer has its target load the topic. */
  readonly peers = new PeerOwners();
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
    const topics = this.registry.all();
    return {
      ...(await trafficTotals(
        this.metrics,
        topics.map((topic) => topic.readerTopic),
      )),
      topicsOwned: topics.length,
      pendingEntries: 0,
    };
  }

  /**
   * Moves a reader topic loaded here to another read-only owner of the group
   * (readonly-transfer.ts); NOT_OWNER when another instance holds it,
   * TOPIC_NOT_LOADED when nobody does.
   */
  async transfer(name: string, targetInstanceId: string): Promise<ReadOnlyTransferOutcome> {
    if (this.draining !== undefined) throw notServing();
    const topic = this.registry.find(name);
    if (topic === undefined || topic.isUnloaded) {
      const answer = await this.clients.lookup.lookupTopic({ topic: name, group: this.identity.group });
      if (answer.owned && answer.instanceId !== this.identity.instanceId)
        throw notOwner(name, answer.advertisedAddress);
      throw new LedgerlineError(
        'NOT_FOUND',
        ReadOnlyOwnerReason.TOPIC_NOT_LOADED,
        `${name} is not loaded on this read-only owner`,
      );
    }
    return transferReadOnlyTopic(this.transferContext(), topic, targetInstanceId);
  }

  /** `ledgerline owners drain`: every topic moved elsewhere (or, with `resume`, the owner taking topics again). */
  drainTopics(resume: boolean): Promise<{ transferred: number; unloaded: number }> {
    if (this.draining !== undefined) return Promise.reject(notServing());
    return drainReadOnly(
      this.transferContext(),
      () => this.registry.all(),
      (topic) => this.registry.unloadTopic(topic, 'the owner is draining', true),
      resume,
    );
  }

  private transferContext() {
    return {
      lookup: this.clients.lookup,
      session: this.session,
      peers: this.peers,
      timeoutMs: this.settings.writerCallTimeoutMs,
      logger: this.logger,
    };
  }

  services(): GrpcServiceRegistration[] {
    return [
      grpcService(TopicsService, readOnlyTopicsServiceImpl(this)),
      grpcService(OwnerControlService, {
        transferTopic: async (request) => {
          const moved = await this.transfer(request.topic, request.targetInstanceId);
          return { ...moved, pausedMs: BigInt(moved.pausedMs) };
        },
        loadTopic: async (request) => {
          await this.topic(request.topic);
          return {};
        },
        drainOwner: (request) => this.drainTopics(request.resume),
      }),
    ];
  }

  /** SIGTERM: unload every topic (unsent acks go to the writer) and release its lease, then end the session. */
  drain(): Promise<void> {
    this.draining ??= (async () => {
      this.logger.info({}, 'draining: releasing every topic');
      this.registry.stop();
      await this.registry.unloadAll('the owner is shutting down', true);
      await this.session.stop();
      this.writer.close();
      this.peers.close();
    })();
    return this.draining;
  }
}
