import type { Bus } from '@ledgerline/bus';
import { LedgerlineError } from '@ledgerline/errors';
import type { HandOverState, ManagedLedgerFactory } from '@ledgerline/managed-ledger';
import { TopicName } from '@ledgerline/naming';
import {
  acquireLease,
  takeUpLease,
  notOwner,
  OwnerReason,
  confirmLeases,
  type MetadataClients,
  type OwnerIdentity,
  type OwnerSession,
} from '@ledgerline/ownership';
import type { Policies } from '@ledgerline/proto';
import type { WriterSettings } from './config.js';
import { Deduplication } from './deduplication.js';
import { notServing } from './errors.js';
import { LacNotifier, sharedLacTurn } from './lac-notifier.js';
import { NamespacePolicies, retentionConfig } from './namespace-policies.js';
import { DeliveryStage, type WriterMetrics } from './metrics.js';
import { OwnedTopic } from './owned-topic.js';
import { WriterReason } from './reasons.js';

/** How a topic is loaded: after a transfer's hand-over, the lease names this owner and the source says what it left. */
export interface TopicLoadOptions {
  leaseHandedOver?: boolean;
  handedOver?: HandOverState;
}

export interface TopicRegistryOptions {
  clients: MetadataClients;
  session: OwnerSession;
  identity: OwnerIdentity;
  factory: ManagedLedgerFactory;
  settings: WriterSettings;
  metrics: WriterMetrics;
  bus: Bus | undefined;
  logger: { info(details: object, message: string): void; warn(details: object, message: string): void };
  now: () => number;
}

/**
 * The topics this instance owns, by lease. A request for a topic not loaded
 * here asks the metadata service who should own it: another instance means
 * NOT_OWNER with its address; this one means acquire the lease, open the
 * managed ledger (which fences the previous owner) and recover deduplication.
 * Leases are re-confirmed every half TTL; a lost lease or a fenced ledger
 * unloads the topic at once.
 */
/** Topic strings whose canonical names are remembered; past this the memory is dropped and rebuilt. */
const MAX_CACHED_NAMES = 10_000;

export class TopicRegistry {
  private readonly topics = new Map<string, Promise<OwnedTopic>>();
  /** Canonical names of the topic strings requests carried: every publish names its topic, and parsing is pure. */
  private readonly canonicalNames = new Map<string, string>();
  private readonly loaded = new Map<string, OwnedTopic>();
  /** Every loaded topic's LAC hints go out in one turn, so the bus writes them together. */
  private readonly lacTurn = sharedLacTurn();
  private serving = false;
  /** False while the owner drains: topics loaded here are served (and moved away), no new one is loaded. */
  private loadingNew = true;
  /** While set, no topic is loaded here, a handed-over one (LoadTopic) included: the refusal says why. */
  private refusal: ((topic: string) => LedgerlineError) | undefined;
  private monitor: NodeJS.Timeout | undefined;
  private monitoring = false;
  private readonly policies: NamespacePolicies;

  constructor(private readonly options: TopicRegistryOptions) {
    this.policies = new NamespacePolicies(options.clients);
  }

  start(): void {
    this.serving = true;
    const everyMs = Math.max(100, Math.floor(this.options.settings.leaseTtlMs / 2));
    this.monitor = setInterval(
      () =>
        this.confirmLeases().catch((error: unknown) =>
          this.options.logger.warn({ err: String(error) }, 'confirming leases failed; trying again'),
        ),
      everyMs,
    );
    this.monitor.unref();
  }

  /** No new topic is loaded and no request served from now on. */
  stopServing(): void {
    this.serving = false;
  }

  /** A drain: new topics are refused (their lookups go elsewhere); with true again, taken as before. */
  acceptNewTopics(accept: boolean): void {
    this.loadingNew = accept;
  }

  /**
   * The ledger store cannot be reached: no topic is loaded here (those loaded stay until moved); a request for
   * one names its owner when that is another instance, else gets `refusal`. undefined loads topics again.
   */
  refuseNewTopics(refusal: ((topic: string) => LedgerlineError) | undefined): void {
    this.refusal = refusal;
  }

  get isServing(): boolean {
    return this.serving;
  }

  /** The topics loaded now. */
  all(): OwnedTopic[] {
    return [...this.loaded.values()];
  }

  /** A loaded topic, without loading it. */
  find(topic: string): OwnedTopic | undefined {
    return this.loaded.get(TopicName.parse(topic).toString());
  }

  /**
   * A topic loaded here or being loaded, without starting a load: a request
   * that arrives while a producer's first publish is still loading the topic
   * waits for that load instead of finding nothing.
   */
  async findOrLoading(topic: string): Promise<OwnedTopic | undefined> {
    const loading = this.topics.get(TopicName.parse(topic).toString());
    return loading === undefined ? undefined : loading.catch(() => undefined);
  }

  /**
   * The topic, loaded here if this instance should own it. With
   * `leaseHandedOver`, another owner handed its lease over to this one (a
   * transfer), so a load takes the lease up without asking the lookup first;
   * `handedOver` is what its close left (read instead when it proves stale).
   */
  async get(topic: string, options: TopicLoadOptions = {}): Promise<OwnedTopic> {
    if (typeof topic !== 'string' || topic === '') {
      throw new LedgerlineError('INVALID_ARGUMENT', OwnerReason.INVALID_REQUEST, 'the request names no topic');
    }
    const name = this.canonicalName(topic);
    if (!this.serving) throw notServing();
    const known = this.topics.get(name);
    if (known !== undefined) return known;
    if (this.refusal !== undefined) {
      // A handed-over lease names this owner: the source takes it back when the load is refused.
      if (options.leaseHandedOver === true) throw this.refusal(name);
      return this.elsewhere(name, this.refusal);
    }
    if (!this.loadingNew) return this.elsewhere(name);
    if (this.topics.size >= this.options.settings.maxTopics) {
      throw new LedgerlineError(
        'RESOURCE_EXHAUSTED',
        OwnerReason.TOO_MANY_TOPICS,
        `this owner holds ${this.options.settings.maxTopics} topics (maxTopics)`,
      );
    }
    const loading = this.load(name, options.leaseHandedOver === true, options.handedOver);
    this.topics.set(name, loading);
    loading.catch(() => {
      if (this.topics.get(name) === loading) this.topics.delete(name);
    });
    return loading;
  }

  /** While draining: NOT_OWNER naming the topic's owner when it is another instance, else not serving (or `refusal`). */
  private async elsewhere(name: string, refusal?: (topic: string) => LedgerlineError): Promise<never> {
    const answer = await this.options.clients.lookup.lookupTopic({ topic: name });
    if (answer.instanceId !== this.options.identity.instanceId) throw notOwner(name, answer.advertisedAddress);
    throw refusal?.(name) ?? notServing();
  }

  /** The topic's canonical name (INVALID_ARGUMENT for a bad one); at most MAX_CACHED_NAMES are remembered. */
  private canonicalName(topic: string): string {
    const known = this.canonicalNames.get(topic);
    if (known !== undefined) return known;
    const name = TopicName.parse(topic).toString();
    if (this.canonicalNames.size >= MAX_CACHED_NAMES) this.canonicalNames.clear();
    this.canonicalNames.set(topic, name);
    return name;
  }

  private checkWritable(topic: TopicName): Promise<Policies | undefined> {
    return this.policies.writable(topic);
  }

  private async acquire(name: string, handedOver: boolean): Promise<number> {
    const { clients, session, identity } = this.options;
    const context = { lookup: clients.lookup, session, identity };
    await (handedOver ? takeUpLease(context, name) : acquireLease(context, name));
    return performance.now();
  }

  /**
   * The namespace's policies and the lease, asked for together (a load is
   * most of a transfer's pause): a lease taken for a topic that turns out not
   * to be writable here is given up again, unless it was handed over.
   * `leased` resolves once the lease is this owner's, with when it was.
   */
  private async policiesAndLease(topic: TopicName, name: string, handedOver: boolean) {
    if (handedOver) return this.policiesBesideTakeUp(topic, name);
    const [policies, lease] = await Promise.allSettled([
      this.checkWritable(topic).then((value) => ({ value, atMs: performance.now() })),
      this.acquire(name, false),
    ]);
    if (policies.status === 'rejected') {
      if (lease.status === 'fulfilled') await this.release(name);
      throw policies.reason;
    }
    if (lease.status === 'rejected') throw lease.reason;
    return { policies: policies.value.value, checkedMs: policies.value.atMs, leased: Promise.resolve(lease.value) };
  }

  /**
   * A handed-over lease names this owner already (the source's TransferLease
   * wrote it by compare-and-set): taking it up only confirms it, so the load
   * goes on meanwhile rather than after it, and waits for it before the topic
   * serves. Opening the managed ledger first is safe: fencing is the ledger's
   * compare-and-set, not the lease's, and a take-up that fails (the source
   * reclaimed the lease after a LoadTopic that timed out) fails the load, which
   * closes the ledger again. A lease handed over stays taken up when the
   * namespace refuses the topic: the source then counts the topic as here, and
   * the next request loads it.
   */
  private async policiesBesideTakeUp(topic: TopicName, name: string) {
    const leased = this.acquire(name, true);
    // Awaited by the load (or below); until then a failure must not count as unhandled.
    leased.catch(() => undefined);
    let policies: Policies | undefined;
    try {
      policies = await this.checkWritable(topic);
    } catch (error) {
      await leased.catch(() => undefined);
      throw error;
    }
    return { policies, checkedMs: performance.now(), leased };
  }

  private async load(name: string, handedOver: boolean, state: HandOverState | undefined): Promise<OwnedTopic> {
    const { factory, settings, metrics, now } = this.options;
    const topic = TopicName.parse(name);
    const startedMs = performance.now();
    const { policies, checkedMs, leased } = await this.policiesAndLease(topic, name, handedOver);
    const buckets = policies?.numberOfTopicBuckets ?? 1;
    try {
      const opening = { numberOfTopicBuckets: buckets, ...(state === undefined ? {} : { handedOver: state }) };
      const ledger = await factory.open(topic, retentionConfig(policies), opening);
      const openedMs = performance.now();
      const dedup = await Deduplication.recover(
        ledger,
        {
          maxProducers: settings.maxDedupProducersPerTopic,
          producerInactivityMs: settings.dedupProducerInactivityMs,
          snapshotIntervalEntries: settings.dedupSnapshotIntervalEntries,
          snapshotIntervalMs: settings.dedupSnapshotIntervalMs,
        },
        now,
      );
      const recoveredMs = performance.now();
      const acquiredMs = await leased;
      if (!this.serving) throw notServing();
      const owned = new OwnedTopic({
        name,
        ledger,
        dedup,
        lac: new LacNotifier(
          this.options.bus,
          (delayMs) => metrics.stageLatency[DeliveryStage.STORED_TO_LAC_HINT].observe(delayMs / 1000),
          this.lacTurn,
        ),
        metrics,
        maxPendingBytes: settings.maxPendingBytesPerTopic,
        maxPendingEntries: settings.maxPendingEntriesPerTopic,
        maxMessageSizeBytes: settings.maxMessageSizeBytes,
        now,
        closeLedger: () => factory.closeLedger(topic, { numberOfTopicBuckets: buckets }),
        onUnloaded: (unloaded) => this.forget(unloaded),
        onOwnershipLost: (lost, error) => {
          this.unloadTopic(lost, `ownership lost: ${error.reason}`, false).catch((failure: unknown) =>
            this.options.logger.warn({ topic: name, err: String(failure) }, 'unloading a lost topic failed'),
          );
        },
      });
      this.loaded.set(name, owned);
      metrics.topicsLoaded.set(this.loaded.size);
      metrics.leasesHeld.set(this.loaded.size);
      // Where a load's time went: it is most of a transfer's pause.
      // A handed-over lease is taken up beside the rest, so the phases may overlap.
      const phases = {
        namespaceMs: Math.round(checkedMs - startedMs),
        leaseMs: Math.round(acquiredMs - startedMs),
        openMs: Math.round(openedMs - (handedOver ? checkedMs : Math.max(checkedMs, acquiredMs))),
        dedupMs: Math.round(recoveredMs - openedMs),
        totalMs: Math.round(performance.now() - startedMs),
      };
      this.options.logger.info({ topic: name, ...phases }, 'topic loaded');
      return owned;
    } catch (error) {
      await factory.closeLedger(topic, { numberOfTopicBuckets: buckets }).catch(() => undefined);
      // A take-up still under way would hold the lease past this release.
      await leased.catch(() => undefined);
      await this.release(name);
      throw error;
    }
  }

  private forget(topic: OwnedTopic): void {
    if (this.loaded.get(topic.name) === topic) {
      this.loaded.delete(topic.name);
      this.topics.delete(topic.name);
    }
    this.options.metrics.topicsLoaded.set(this.loaded.size);
    this.options.metrics.leasesHeld.set(this.loaded.size);
  }

  /** Gives up the lease of a topic no longer loaded here (a drain whose transfer failed). */
  releaseLease(name: string): Promise<void> {
    return this.release(name);
  }

  private async release(name: string): Promise<void> {
    let sessionId: string;
    try {
      sessionId = this.options.session.sessionId;
    } catch {
      return; // No session: the lease went with it.
    }
    await this.options.clients.lookup
      .releaseLease({ topic: name, sessionId }, { deadlineMs: 5_000 })
      .catch((error: unknown) =>
        this.options.logger.warn(
          { topic: name, err: String(error) },
          'releasing the lease failed; it lapses with the session',
        ),
      );
  }

  /** Unloads one topic; with `release`, its lease is given up so the next owner need not wait for the TTL. */
  async unloadTopic(topic: OwnedTopic, why: string, release: boolean): Promise<void> {
    if (this.loaded.get(topic.name) !== topic) return;
    // A lease that is not released is one already lost (session, lease or ledger gone): nothing owed is kept.
    await topic.unload(why, !release);
    if (release) await this.release(topic.name);
    this.options.logger.info({ topic: topic.name, why }, 'topic unloaded');
  }

  /** Unloads a topic by name (admin request); NOT_FOUND when it is not loaded here. */
  async unload(name: string): Promise<void> {
    const topic = await this.findOrLoading(name);
    if (topic === undefined) {
      throw new LedgerlineError('NOT_FOUND', WriterReason.TOPIC_NOT_LOADED, `${name} is not loaded on this owner`);
    }
    await this.unloadTopic(topic, 'unloaded on request', true);
  }

  /** Every topic goes: after a lost session (leases already gone) or on drain (leases released). */
  async unloadAll(why: string, release: boolean): Promise<void> {
    await Promise.all(this.all().map((topic) => this.unloadTopic(topic, why, release)));
  }

  stop(): void {
    if (this.monitor !== undefined) clearInterval(this.monitor);
  }

  /** Re-confirms every lease in one ConfirmLeases call per 1,000 topics; a lost lease or ledger unloads at once. */
  private async confirmLeases(): Promise<void> {
    if (this.monitoring || !this.serving) return;
    this.monitoring = true;
    try {
      const held: OwnedTopic[] = [];
      for (const topic of this.all()) {
        // A transfer hands the lease over itself: its loss is the point, not a reason to unload.
        if (topic.handingOver) continue;
        if (topic.ledger.state === 'fenced') await this.unloadTopic(topic, 'another owner fenced its ledger', false);
        else held.push(topic);
      }
      const { clients, session, settings } = this.options;
      const names = held.map((topic) => topic.name);
      const lost = await confirmLeases(clients.lookup, session.sessionId, names, settings.leaseTtlMs);
      for (const topic of held) {
        const why = lost.get(topic.name);
        // A transfer that started while the call was out moved the lease on purpose.
        if (why !== undefined && !topic.handingOver) await this.unloadTopic(topic, `lease lost: ${why}`, false);
      }
    } finally {
      this.monitoring = false;
    }
  }
}
