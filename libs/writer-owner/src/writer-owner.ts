import { setMaxListeners } from 'node:events';
import type { Bus } from '@ledgerline/bus';
import type { LedgerStore } from '@ledgerline/ledger-store';
import type { Position } from '@ledgerline/cursor-codec';
import { ManagedLedgerFactory, type ManagedLedgerMetadata, type SeekTarget } from '@ledgerline/managed-ledger';
import {
  notOwner,
  OwnerSession,
  PeerOwners,
  type ConsumeOutput,
  type MetadataClients,
  type OwnerIdentity,
} from '@ledgerline/ownership';
import { LedgerlineError } from '@ledgerline/errors';
import { CursorsService, TopicsService, type ConsumeRequest } from '@ledgerline/proto';
import type { CallContext } from '@ledgerline/rpc';
import { grpcService, type GrpcServiceRegistration } from '@ledgerline/service-kit';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { WriterSettings } from './config.js';
import { cursorsServiceImpl } from './cursors-service.js';
import { notServing, subscriptionNotFound } from './errors.js';
import { StageTrace } from './stage-trace.js';
import { writerMetrics, type WriterMetrics } from './metrics.js';
import type { OwnedTopic } from './owned-topic.js';
import type { LiveSubscriptionStats } from './owner-view.js';
import { refreshSubscriptionGauges } from './subscription-gauges.js';
import { TopicRegistry, type TopicLoadOptions } from './topic-registry.js';
import { topicsServiceImpl } from './topics-service.js';
import { exportLoadMetrics, LoadMeter } from '@ledgerline/ownership';
import { register as defaultRegistry } from 'prom-client';
import { writerLoadTotals } from './load-totals.js';
import { ownerControlServiceImpl } from './owner-control-service.js';
import {
  markDraining,
  transferEverything,
  warmPeerChannels,
  type DrainContext,
  type DrainOutcome,
} from './owner-drain.js';
import { transferTopic, type TransferOutcome } from './topic-transfer.js';
import { WriterReason } from './reasons.js';
import { OwnerControlService } from '@ledgerline/proto';
import { StoreReachability } from './store-reachability.js';
import { releaseUnwritableTopics, storeUnreachable, type StoreReleaseContext } from './store-release.js';

/** A ledger id no ledger has: the store's reachability is tried by reading its info (one round trip, no write). */
const STORE_PROBE_LEDGER_ID = Number.MAX_SAFE_INTEGER;

/** The consume side: subscriptions and their consumers, over the owner's topics. */
export interface ConsumeBackend {
  consume(requests: AsyncIterable<ConsumeRequest>, context: CallContext): AsyncIterable<ConsumeOutput>;
  connectedConsumers(topic: OwnedTopic, subscription: string): number;
  subscriptionStats(topic: OwnedTopic, subscription: string): Promise<LiveSubscriptionStats | undefined>;
  /** Seeks a subscription with consumers connected (they are redelivered from there); undefined when it has none. */
  seek(topic: OwnedTopic, subscription: string, target: SeekTarget): Promise<Position | undefined>;
  /** The subscription's cursor is gone: its consumers are closed. */
  unsubscribed(topic: OwnedTopic, subscription: string): Promise<void>;
}

export interface WriterOwnerOptions {
  settings: WriterSettings;
  identity: OwnerIdentity;
  clients: MetadataClients;
  ledgerStore: LedgerStore;
  /** ManagedLedgerInfo and cursor nodes: over gRPC in a cluster. */
  metadata: ManagedLedgerMetadata;
  bus?: Bus;
  logger: Logger;
  metricsRegistry?: Registry;
  now?: () => number;
  /** Builds the consume side over this owner (the subscriptions lib). */
  consumeBackend: (owner: WriterOwner) => ConsumeBackend;
}

/**
 * The writer owner: its owner session, the topics it owns by lease, and the
 * gRPC services over them (TopicsService, CursorsService). Hosted by
 * apps/writer-owner and by standalone.
 */
export class WriterOwner {
  readonly settings: WriterSettings;
  readonly identity: OwnerIdentity;
  readonly clients: MetadataClients;
  readonly metrics: WriterMetrics;
  readonly registry: TopicRegistry;
  readonly logger: Logger;
  /** The load this owner reports with its keep-alive (and exports as metrics). */
  readonly load: LoadMeter;
  private readonly session: OwnerSession;
  private readonly factory: ManagedLedgerFactory;
  private readonly drainController = new AbortController();
  private readonly backend: ConsumeBackend;
  private draining: Promise<void> | undefined;
  /** Channels to the other owners, for transfers (connected once the service serves). */
  readonly peers = new PeerOwners();
  private readonly transfers = new Map<string, Promise<TransferOutcome>>();
  /** Whether the ledger store answers; while it does not, topics go to owners that can write. */
  private readonly store: StoreReachability;
  /** An operator's drain (`owners drain`) holds the draining mark whatever the store does. */
  private operatorDraining = false;
  /** The session marked draining for an unreachable store: a session registered anew after a loss is marked too. */
  private markedSessionId: string | undefined;
  /** Topics being moved off because the store cannot be reached (one pass at a time). */
  private releasing: Promise<unknown> | undefined;

  constructor(options: WriterOwnerOptions) {
    const now = options.now ?? Date.now;
    this.settings = options.settings;
    this.identity = options.identity;
    this.clients = options.clients;
    this.logger = options.logger;
    this.metrics = writerMetrics(options.metricsRegistry);
    if (options.settings.stageTrace) this.metrics.trace ??= new StageTrace(options.metricsRegistry ?? defaultRegistry);
    // Every open Publish stream listens for the drain until it ends: thousands of producers mean thousands of
    // listeners, which is no leak, so Node's warning past 10 would only mislead whoever reads the log.
    setMaxListeners(Number.POSITIVE_INFINITY, this.drainController.signal);
    this.load = new LoadMeter(() => writerLoadTotals(this), { now });
    exportLoadMetrics(options.metricsRegistry ?? defaultRegistry, 'writer', this.load);
    this.session = new OwnerSession({
      clients: options.clients,
      identity: options.identity,
      ttlMs: options.settings.leaseTtlMs,
      logger: options.logger,
      now,
      load: this.load,
      onLost: () => {
        this.registry
          .unloadAll('owner session lost', false)
          .catch((error: unknown) =>
            options.logger.warn({ err: String(error) }, 'unloading after a lost session failed'),
          );
      },
    });
    this.factory = new ManagedLedgerFactory(
      {
        ledgerStore: options.ledgerStore,
        metadata: options.metadata,
        ...(options.bus === undefined ? {} : { bus: options.bus }),
        logger: options.logger,
        ...(options.metricsRegistry === undefined ? {} : { metricsRegistry: options.metricsRegistry }),
        clock: now,
        ...(this.metrics.trace === undefined ? {} : { appendTrace: this.metrics.trace }),
      },
      {
        maintenanceIntervalMs: options.settings.trimIntervalMs,
        // Broker entry metadata goes in front of what the producer sent; the managed ledger's ceiling is 64 MiB.
        maxEntrySizeBytes: Math.min(options.settings.maxMessageSizeBytes + 1024, 64 * 1024 * 1024),
        maxEntriesPerLedger: options.settings.maxEntriesPerLedger,
        maxPendingAppends: 2 * options.settings.maxPendingEntriesPerTopic,
        minLedgerAgeMs: options.settings.minLedgerAgeMs,
        cursor: { maxProperties: options.settings.maxDedupProducersPerTopic },
      },
    );
    this.registry = new TopicRegistry({
      clients: options.clients,
      session: this.session,
      identity: options.identity,
      factory: this.factory,
      settings: options.settings,
      metrics: this.metrics,
      bus: options.bus,
      logger: options.logger,
      now,
    });
    this.backend = options.consumeBackend(this);
    this.metrics.refreshSubscriptionsWith(() => refreshSubscriptionGauges(this));
    this.store = new StoreReachability(() => options.ledgerStore.info(STORE_PROBE_LEDGER_ID), options.settings, {
      unreachable: () => this.storeLost(),
      stillUnreachable: () => {
        this.markSessionDraining();
        this.releaseUnwritable();
      },
      reachable: () => this.storeBack(),
    });
  }

  /** False while the ledger store has not answered for storeUnreachableReleaseMs: no topic is taken then. */
  get storeReachable(): boolean {
    return this.store.reachable;
  }

  /**
   * The store answered nothing for the bound: take no topic (lookups and the balancer place none here, as
   * for a drain; LoadTopic is refused), and move every topic to an owner that can write.
   */
  private storeLost(): void {
    this.logger.warn(
      { boundMs: this.settings.storeUnreachableReleaseMs },
      'the ledger store cannot be reached: moving every topic to other owners, taking none',
    );
    this.metrics.ledgerStoreReachable.set(0);
    this.registry.refuseNewTopics(storeUnreachable);
    this.markSessionDraining();
    this.releaseUnwritable();
  }

  /** Marks the live session draining unless it is marked already (the mark goes with a session that is lost). */
  private markSessionDraining(): void {
    let sessionId: string;
    try {
      sessionId = this.session.sessionId;
    } catch {
      return; // No live session: the next one is marked once registered.
    }
    if (sessionId === this.markedSessionId) return;
    this.markedSessionId = sessionId;
    this.markDrainingInBackground(true);
  }

  private releaseUnwritable(): void {
    if (this.releasing !== undefined || this.draining !== undefined) return;
    if (this.registry.all().every((topic) => topic.unloaded || topic.handingOver)) return;
    const context: StoreReleaseContext = {
      registry: this.registry,
      lookup: this.clients.lookup,
      session: this.session,
      peers: this.peers,
      timeoutMs: this.settings.transferTimeoutMs,
      concurrency: this.settings.drainTransferConcurrency,
      logger: this.logger,
    };
    this.releasing = releaseUnwritableTopics(context)
      .then(({ moved, released }) => {
        this.metrics.storeUnreachableReleases.inc({ outcome: 'moved' }, moved);
        this.metrics.storeUnreachableReleases.inc({ outcome: 'released' }, released);
      })
      .catch((error: unknown) => this.logger.warn({ err: String(error) }, 'moving topics off failed'))
      .finally(() => (this.releasing = undefined));
  }

  private storeBack(): void {
    this.logger.info({}, 'the ledger store answers again: taking topics');
    this.metrics.ledgerStoreReachable.set(1);
    this.registry.refuseNewTopics(undefined);
    this.markedSessionId = undefined;
    if (!this.operatorDraining && this.draining === undefined) this.markDrainingInBackground(false);
  }

  private markDrainingInBackground(draining: boolean): void {
    markDraining(this.drainContext(), draining).catch((error: unknown) =>
      this.logger.warn({ err: String(error) }, 'marking this owner draining failed'),
    );
  }

  /** Registers the owner session and starts serving topics. */
  async start(): Promise<void> {
    await this.session.start();
    this.registry.start();
    this.store.start();
    this.logger.info(
      { instanceId: this.identity.instanceId, address: this.identity.advertisedAddress },
      'writer owner serving',
    );
  }

  /** Aborted when draining starts: publish streams stop reading and end. */
  get drainSignal(): AbortSignal {
    return this.drainController.signal;
  }

  /** The topic, loaded here when this instance should own it (while draining, only those still here). */
  topic(name: string, options: TopicLoadOptions = {}): Promise<OwnedTopic> {
    return this.registry.get(name, options);
  }

  /**
   * Moves a topic loaded here to another owner without a stall (topic-transfer.ts);
   * NOT_OWNER when another instance holds it, TOPIC_NOT_LOADED when nobody does.
   */
  async transfer(name: string, targetInstanceId: string): Promise<TransferOutcome> {
    const topic = await this.registry.findOrLoading(name);
    if (topic === undefined) {
      const answer = await this.clients.lookup.lookupTopic({ topic: name });
      if (answer.owned && answer.instanceId !== this.identity.instanceId)
        throw notOwner(name, answer.advertisedAddress);
      throw new LedgerlineError('NOT_FOUND', WriterReason.TOPIC_NOT_LOADED, `${name} is not loaded on this owner`);
    }
    return this.transferLoaded(topic, targetInstanceId);
  }

  private transferLoaded(topic: OwnedTopic, targetInstanceId: string): Promise<TransferOutcome> {
    if (this.transfers.has(topic.name) || topic.handingOver) {
      const error = `${topic.name} is being moved already`;
      return Promise.reject(new LedgerlineError('ABORTED', WriterReason.TRANSFER_IN_PROGRESS, error));
    }
    const context = {
      lookup: this.clients.lookup,
      session: this.session,
      peers: this.peers,
      timeoutMs: this.settings.transferTimeoutMs,
      logger: this.logger,
    };
    const moving = transferTopic(context, topic, targetInstanceId).finally(() => this.transfers.delete(topic.name));
    this.transfers.set(topic.name, moving);
    return moving;
  }

  private drainContext(): DrainContext {
    return {
      registry: this.registry,
      lookup: this.clients.lookup,
      session: this.session,
      transfer: (topic, target) => this.transferLoaded(topic, target),
      concurrency: this.settings.drainTransferConcurrency,
      warmTargets: () =>
        warmPeerChannels({
          lookup: this.clients.lookup,
          peers: this.peers,
          identity: this.identity,
          logger: this.logger,
        }),
      logger: this.logger,
    };
  }

  /**
   * Maintenance: moves every topic to other owners and takes no new one
   * (`ledgerline owners drain`); `resume` takes topics again.
   */
  async drainTopics(resume: boolean): Promise<DrainOutcome> {
    if (this.draining !== undefined) throw notServing();
    this.operatorDraining = !resume;
    if (!resume) return transferEverything(this.drainContext());
    // An owner that cannot reach its store stays marked: it takes topics again when the store answers.
    if (this.store.reachable) await markDraining(this.drainContext(), false);
    this.registry.acceptNewTopics(true);
    return { transferred: 0, unloaded: 0 };
  }

  consume(requests: AsyncIterable<ConsumeRequest>, context: CallContext) {
    return this.load.countConsumer(this.backend.consume(requests, context));
  }

  /** Moves a subscription: through its live consumers when it has some, else the cursor alone. */
  async seek(topic: OwnedTopic, subscription: string, target: SeekTarget): Promise<Position> {
    const moved = await this.backend.seek(topic, subscription, target);
    if (moved !== undefined) return moved;
    const cursor = topic.ledger.getCursor(subscription);
    if (cursor === undefined) throw subscriptionNotFound(topic.name, subscription);
    return cursor.seek(target);
  }

  async unsubscribed(topic: OwnedTopic, subscription: string): Promise<void> {
    await this.backend.unsubscribed(topic, subscription);
  }

  connectedConsumers(topic: OwnedTopic, subscription: string): number {
    return this.backend.connectedConsumers(topic, subscription);
  }

  subscriptionStats(topic: OwnedTopic, subscription: string): Promise<LiveSubscriptionStats | undefined> {
    return this.backend.subscriptionStats(topic, subscription);
  }

  services(): GrpcServiceRegistration[] {
    return [
      grpcService(TopicsService, topicsServiceImpl(this)),
      grpcService(CursorsService, cursorsServiceImpl(this)),
      grpcService(OwnerControlService, ownerControlServiceImpl(this)),
    ];
  }

  /**
   * SIGTERM: take no new topic and move every topic to another owner by
   * transfer (its clients are sent straight there); then let publish streams
   * answer what they read and end, unload what could not move (appends in
   * flight finish, cursors flush, ledgers close) and release its lease, so
   * the next owner takes over at once; then end the session.
   */
  drain(): Promise<void> {
    this.draining ??= (async () => {
      this.logger.info({}, 'draining: moving every topic to other owners');
      await transferEverything(this.drainContext()).catch((error: unknown) =>
        this.logger.warn({ err: String(error) }, 'moving topics off failed: unloading them'),
      );
      this.drainController.abort();
      this.store.stop();
      this.registry.stopServing();
      this.registry.stop();
      await this.registry.unloadAll('the owner is shutting down', true);
      await this.session.stop();
      await this.factory.close();
      this.peers.close();
    })();
    return this.draining;
  }
}
