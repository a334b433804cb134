import type { Bus } from '@ledgerline/bus';
import { LedgerlineError, unexpectedRejection } from '@ledgerline/errors';
import type { LedgerStore } from '@ledgerline/ledger-store';
import { ReadOnlyManagedLedger, type ManagedLedgerMetadata } from '@ledgerline/managed-ledger';
import { TopicName } from '@ledgerline/naming';
import {
  acquireLease,
  OwnerReason,
  confirmLeases,
  type MetadataClients,
  type OwnerIdentity,
  type OwnerSession,
} from '@ledgerline/ownership';
import type { ReadOnlySettings } from './config.js';
import { ReadOnlyTopic } from './readonly-topic.js';
import { ReadOnlyOwnerReason } from './reasons.js';
import type { WriterClients } from './writer-clients.js';

export interface ReadOnlyRegistryOptions {
  clients: MetadataClients;
  session: OwnerSession;
  identity: OwnerIdentity;
  settings: ReadOnlySettings;
  ledgerStore: LedgerStore;
  metadata: Pick<ManagedLedgerMetadata, 'getManagedLedgerInfo'>;
  bus: Bus | undefined;
  writer: WriterClients;
  /** Where each LAC notification's propagation time goes (the lac_propagation histogram). */
  observeLacPropagationMs?: (ms: number) => void;
  logger: { info(details: object, message: string): void; warn(details: object, message: string): void };
}

/** A reader topic and the writer topic it mirrors. */
export interface TopicPair {
  reader: TopicName;
  writer: TopicName;
}

export function notServing(): LedgerlineError {
  return new LedgerlineError(
    'UNAVAILABLE',
    OwnerReason.OWNER_NOT_SERVING,
    'this read-only owner is starting or draining: retry shortly, after a lookup',
  );
}

/**
 * The reader topics this instance serves, each under a lease in its owner
 * session as the writer owner holds its own. Clients name either the reader
 * topic or (after a redirected lookup, PIP-63) the writer topic; both resolve
 * to the same loaded topic.
 */
export class ReadOnlyRegistry {
  private readonly topics = new Map<string, Promise<ReadOnlyTopic>>();
  private readonly loaded = new Map<string, ReadOnlyTopic>();
  /** Writer topic name → reader topic name, for requests that name the writer topic. */
  private readonly aliases = new Map<string, string>();
  private monitor: NodeJS.Timeout | undefined;
  private monitoring = false;
  private serving = true;

  constructor(private readonly options: ReadOnlyRegistryOptions) {}

  start(): void {
    this.monitor = setInterval(
      () => this.confirmLeases().catch(unexpectedRejection),
      Math.max(100, Math.floor(this.options.settings.leaseTtlMs / 2)),
    );
    this.monitor.unref();
  }

  stop(): void {
    this.serving = false;
    if (this.monitor !== undefined) clearInterval(this.monitor);
  }

  all(): ReadOnlyTopic[] {
    return [...this.loaded.values()];
  }

  find(name: string): ReadOnlyTopic | undefined {
    const parsed = TopicName.parse(name).toString();
    return this.loaded.get(this.aliases.get(parsed) ?? parsed);
  }

  /** The topic a request names (reader or writer name), loaded here when this instance should serve it. */
  async get(name: string): Promise<ReadOnlyTopic> {
    if (typeof name !== 'string' || name === '') {
      throw new LedgerlineError('INVALID_ARGUMENT', OwnerReason.INVALID_REQUEST, 'the request names no topic');
    }
    if (!this.serving) throw notServing();
    const parsed = TopicName.parse(name).toString();
    const known = this.topics.get(this.aliases.get(parsed) ?? parsed);
    if (known !== undefined) return known;
    const pair = await this.resolve(TopicName.parse(name));
    const reader = pair.reader.toString();
    this.aliases.set(pair.writer.toString(), reader);
    const again = this.topics.get(reader);
    if (again !== undefined) return again;
    if (this.topics.size >= this.options.settings.maxTopics) {
      throw new LedgerlineError(
        'RESOURCE_EXHAUSTED',
        OwnerReason.TOO_MANY_TOPICS,
        `this owner serves ${this.options.settings.maxTopics} topics (maxTopics)`,
      );
    }
    const loading = this.load(pair, name);
    this.topics.set(reader, loading);
    loading.catch(() => {
      if (this.topics.get(reader) === loading) this.topics.delete(reader);
    });
    return loading;
  }

  /**
   * A topic of a reader namespace names its writer topic by the namespace's
   * writerNamespace; a writer topic is looked up through this instance's
   * group, which answers with the reader topic (redirect_topic) when the
   * group serves a reader namespace of it.
   */
  private async resolve(topic: TopicName): Promise<TopicPair> {
    const { clients, identity, settings } = this.options;
    const { namespace } = await clients.admin.getNamespace({ namespace: topic.namespaceName.toString() });
    const writerNamespace = namespace?.policies?.writerNamespace ?? '';
    if (writerNamespace !== '') {
      return { reader: topic, writer: TopicName.parse(`${topic.domain}://${writerNamespace}/${topic.localName}`) };
    }
    const answer = await clients.lookup.lookupTopic(
      { topic: topic.toString(), group: identity.group },
      { deadlineMs: settings.writerCallTimeoutMs },
    );
    if (answer.redirectTopic === '') {
      throw new LedgerlineError(
        'FAILED_PRECONDITION',
        ReadOnlyOwnerReason.NOT_A_READER_TOPIC,
        `${topic.toString()} is not mirrored by a reader namespace of group ${identity.group}: consume it from its writer owner`,
        { details: { topic: topic.toString(), group: identity.group } },
      );
    }
    return { reader: TopicName.parse(answer.redirectTopic), writer: topic };
  }

  private async acquire(reader: string, asked: string): Promise<void> {
    const { clients, session, identity } = this.options;
    await acquireLease({ lookup: clients.lookup, session, identity }, reader, asked);
  }

  private async load(pair: TopicPair, asked: string): Promise<ReadOnlyTopic> {
    const { clients, settings } = this.options;
    const reader = pair.reader.toString();
    await this.acquire(reader, asked);
    try {
      const { namespace } = await clients.admin.getNamespace({ namespace: pair.writer.namespaceName.toString() });
      const view = await ReadOnlyManagedLedger.open({
        topic: pair.writer,
        numberOfTopicBuckets: namespace?.policies?.numberOfTopicBuckets ?? 1,
        ledgerStore: this.options.ledgerStore,
        metadata: this.options.metadata,
        ...(this.options.bus === undefined ? {} : { bus: this.options.bus }),
        settings: {
          lacFallbackMs: settings.lacFallbackMs,
          metadataRefreshMs: settings.metadataRefreshMs,
          entryCacheMaxBytes: settings.entryCacheMaxBytesPerTopic,
        },
        logger: this.options.logger,
        ...(this.options.observeLacPropagationMs === undefined
          ? {}
          : { observeLacPropagationMs: this.options.observeLacPropagationMs }),
      });
      if (!this.serving) {
        view.close();
        throw notServing();
      }
      const topic = new ReadOnlyTopic({
        readerTopic: reader,
        writerTopic: pair.writer.toString(),
        view,
        writer: this.options.writer,
        settings,
        logger: this.options.logger,
        onUnloaded: (gone) => this.forget(gone),
      });
      this.loaded.set(reader, topic);
      this.options.logger.info({ topic: reader, writerTopic: pair.writer.toString() }, 'topic loaded');
      return topic;
    } catch (error) {
      await this.release(reader);
      throw error;
    }
  }

  private forget(topic: ReadOnlyTopic): void {
    if (this.loaded.get(topic.readerTopic) !== topic) return;
    this.loaded.delete(topic.readerTopic);
    this.topics.delete(topic.readerTopic);
    this.aliases.delete(topic.writerTopic);
  }

  private async release(reader: string): Promise<void> {
    let sessionId: string;
    try {
      sessionId = this.options.session.sessionId;
    } catch {
      return; // No session: the lease went with it.
    }
    await this.options.clients.lookup
      .releaseLease({ topic: reader, sessionId }, { deadlineMs: 5_000 })
      .catch((error: unknown) =>
        this.options.logger.warn({ topic: reader, err: String(error) }, 'releasing the lease failed; it lapses'),
      );
  }

  /** Unloads one topic; with `release`, its lease is given up so another instance need not wait for the TTL. */
  async unloadTopic(topic: ReadOnlyTopic, why: string, release: boolean): Promise<void> {
    if (this.loaded.get(topic.readerTopic) !== topic) return;
    await topic.unload(why);
    if (release) await this.release(topic.readerTopic);
  }

  async unloadAll(why: string, release: boolean): Promise<void> {
    await Promise.all(this.all().map((topic) => this.unloadTopic(topic, why, release)));
  }

  /** Re-confirms every lease in one ConfirmLeases call (per 1,000 topics); a topic whose lease is gone is unloaded at once. */
  private async confirmLeases(): Promise<void> {
    if (this.monitoring || !this.serving) return;
    this.monitoring = true;
    try {
      // A transfer hands the lease over itself: its loss is the point, not a reason to unload.
      const held = this.all().filter((topic) => !topic.handingOver);
      const { clients, session, settings } = this.options;
      const names = held.map((topic) => topic.readerTopic);
      const lost = await confirmLeases(clients.lookup, session.sessionId, names, settings.leaseTtlMs);
      for (const topic of held) {
        const why = lost.get(topic.readerTopic);
        if (why !== undefined && !topic.handingOver) await this.unloadTopic(topic, `lease lost: ${why}`, false);
      }
    } catch (error) {
      this.options.logger.warn({ err: String(error) }, 'confirming leases failed');
    } finally {
      this.monitoring = false;
    }
  }
}
