import { LedgerlineError } from '@ledgerline/errors';
import type { GetTopicStatsResponse } from '@ledgerline/proto';
import { callOwner, partitionTopic, type ClientContext } from './client-context.js';
import { ClientReason } from './client-reason.js';
import { Consumer } from './consumer.js';
import { subscribeSettings, type SubscribeOptions } from './subscribe-options.js';
import {
  DEFAULT_MAX_RECONNECT_ATTEMPTS,
  DEFAULT_OPERATION_TIMEOUT_MS,
  DEFAULT_RECONNECT_INITIAL_DELAY_MS,
  DEFAULT_RECONNECT_MAX_DELAY_MS,
  integerOption,
  invalidOption,
  MAX_OPERATION_TIMEOUT_MS,
  MAX_RECONNECT_ATTEMPTS,
  MAX_RECONNECT_DELAY_MS,
  stringOption,
  topicOption,
} from './options.js';
import { checkProducerOptions, generatedName, Producer, type ProducerOptions } from './producer.js';
import { Reader, type ReaderOptions } from './reader.js';
import { normaliseAddress, ServiceConnections, type TlsOptions } from './service-connections.js';
import { TopicLookup } from './topic-lookup.js';

/** Options of `createClient`. */
export interface ClientOptions {
  /** The metadata service (standalone: the standalone process), `host:port`. Required. */
  serviceUrl: string;
  /** A bearer token (JWT) sent with every call. Default: none. */
  token?: string;
  /**
   * TLS: `true` for the system's roots, or `{ ca, cert?, key? }` (PEM text or
   * bytes: the CA the services' certificates come from and, for mutual TLS, the
   * client's certificate and key). A CA that did not issue the service's
   * certificate fails calls with UNAVAILABLE / TLS_HANDSHAKE_FAILED at once,
   * without retrying. Default: off.
   */
  tls?: boolean | TlsOptions;
  /** How long one lookup or unary call may take. Default 30,000 ms; from 1 to 600,000. */
  operationTimeoutMs?: number;
  /**
   * The owner group to look topics up through (PIP-63): consuming through a
   * read-only owner group keeps the writer topic's name. Default: '' (each
   * topic's own group). At most 256 characters.
   */
  lookupGroup?: string;
  /** First delay before reconnecting to a topic's owner. Default 50 ms; from 1 to 60,000. */
  reconnectInitialDelayMs?: number;
  /** Longest delay between reconnect attempts (exponential backoff, full jitter). Default 2,000 ms; from 1 to 60,000. */
  reconnectMaxDelayMs?: number;
  /** Attempts to reach a topic's owner before failing with RECONNECT_GAVE_UP. Default 20; from 1 to 10,000. */
  maxReconnectAttempts?: number;
}

type Closeable = Producer | Consumer | Reader;

/**
 * A connection to a Ledgerline cluster (or standalone): creates producers,
 * consumers and readers, and shares lookups and connections among them.
 */
export class LedgerlineClient {
  private readonly context: ClientContext;
  private readonly connections: ServiceConnections;
  private readonly open = new Set<Closeable>();
  private closed: LedgerlineError | undefined;

  /** @internal Use `createClient(options)`. */
  constructor(options: ClientOptions) {
    if (typeof options !== 'object' || options === null) throw invalidOption('options', 'must be an object');
    const serviceUrl = normaliseAddress(stringOption('serviceUrl', options.serviceUrl ?? '', '', 1024));
    const operationTimeoutMs = integerOption(
      'operationTimeoutMs',
      options.operationTimeoutMs,
      DEFAULT_OPERATION_TIMEOUT_MS,
      1,
      MAX_OPERATION_TIMEOUT_MS,
    );
    const group =
      options.lookupGroup === undefined || options.lookupGroup === ''
        ? ''
        : stringOption('lookupGroup', options.lookupGroup, '');
    const initialDelayMs = integerOption(
      'reconnectInitialDelayMs',
      options.reconnectInitialDelayMs,
      DEFAULT_RECONNECT_INITIAL_DELAY_MS,
      1,
      MAX_RECONNECT_DELAY_MS,
    );
    const maxDelayMs = integerOption(
      'reconnectMaxDelayMs',
      options.reconnectMaxDelayMs,
      DEFAULT_RECONNECT_MAX_DELAY_MS,
      1,
      MAX_RECONNECT_DELAY_MS,
    );
    const maxAttempts = integerOption(
      'maxReconnectAttempts',
      options.maxReconnectAttempts,
      DEFAULT_MAX_RECONNECT_ATTEMPTS,
      1,
      MAX_RECONNECT_ATTEMPTS,
    );
    if (options.token !== undefined && (typeof options.token !== 'string' || options.token === '')) {
      throw invalidOption('token', 'must be a non-empty string');
    }
    this.connections = new ServiceConnections({ tls: options.tls ?? false, token: options.token });
    this.context = {
      connections: this.connections,
      lookup: new TopicLookup(this.connections, serviceUrl, group, operationTimeoutMs),
      reconnect: { initialDelayMs, maxDelayMs: Math.max(initialDelayMs, maxDelayMs), maxAttempts },
      operationTimeoutMs,
      group,
      closedError: () => this.closed,
    };
  }

  /**
   * Creates a producer. A topic that does not exist is created where its
   * namespace allows topic auto-creation (standalone's `public/default` does);
   * elsewhere this fails with the service's TOPIC_NOT_FOUND.
   */
  async producer(options: ProducerOptions): Promise<Producer> {
    this.throwIfClosed();
    const topic = topicOption(options?.topic);
    const producerName = stringOption('producerName', options.producerName, generatedName('producer'));
    checkProducerOptions(options);
    const partitions = await this.context.lookup.partitionsForUse(topic);
    this.throwIfClosed();
    return this.track(new Producer(this.context, topic, producerName, partitions, options));
  }

  /**
   * Subscribes; resolves once every partition's owner has accepted the
   * subscription. A missing topic is created as for `producer`.
   */
  async subscribe(options: SubscribeOptions): Promise<Consumer> {
    this.throwIfClosed();
    const topic = topicOption(options?.topic);
    const settings = subscribeSettings(options);
    const partitions = await this.context.lookup.partitionsForUse(topic);
    this.throwIfClosed();
    const consumer = this.track(
      new Consumer(this.context, topic, settings.subscribe.subscription, settings.type, partitions, settings),
    );
    try {
      await consumer.start();
    } catch (error) {
      this.open.delete(consumer);
      throw error;
    }
    return consumer;
  }

  /** Creates a reader: reads from a start without a subscription. A missing topic is created as for `producer`. */
  async reader(options: ReaderOptions): Promise<Reader> {
    this.throwIfClosed();
    const topic = topicOption(options?.topic);
    const partitions = await this.context.lookup.partitionsForUse(topic);
    this.throwIfClosed();
    return this.track(new Reader(this.context, topic, partitions, options));
  }

  /** The statistics of a topic, one answer per partition (one for a non-partitioned topic). */
  async topicStats(topic: string): Promise<{ topic: string; stats: GetTopicStatsResponse }[]> {
    return this.eachPartition(topic, (name) =>
      callOwner(
        this.context,
        name,
        () => this.closed,
        (clients, options) => clients.topics.getTopicStats({ topic: name }, options),
      ),
    );
  }

  /** Unloads a topic (each partition) from its owner; the next lookup picks an owner afresh. */
  async unloadTopic(topic: string): Promise<void> {
    await this.eachPartition(topic, async (name) => {
      await callOwner(
        this.context,
        name,
        () => this.closed,
        (clients, options) => clients.topics.unloadTopic({ topic: name }, options),
      );
      this.context.lookup.forget(name);
    });
  }

  /**
   * Closes the client: producers, consumers and readers still open are closed
   * without waiting (unsent messages fail with CLIENT_CLOSED), then every
   * connection. Later calls fail with CLIENT_CLOSED. Closing twice is fine.
   */
  async close(): Promise<void> {
    if (this.closed !== undefined) return;
    this.closed = new LedgerlineError('FAILED_PRECONDITION', ClientReason.CLIENT_CLOSED, 'the client is closed');
    for (const closeable of this.open) closeable.abandon(this.closed);
    this.open.clear();
    this.connections.close();
  }

  private async eachPartition<T>(
    topic: string,
    action: (name: string) => Promise<T>,
  ): Promise<{ topic: string; stats: T }[]> {
    this.throwIfClosed();
    const name = topicOption(topic);
    const partitions = await this.context.lookup.partitions(name);
    const names = Array.from({ length: Math.max(1, partitions) }, (_, index) =>
      partitionTopic(name, partitions, index),
    );
    return Promise.all(names.map(async (each) => ({ topic: each, stats: await action(each) })));
  }

  private track<T extends Closeable>(closeable: T): T {
    this.open.add(closeable);
    return closeable;
  }

  private throwIfClosed(): void {
    if (this.closed !== undefined) throw this.closed;
  }
}

/** Creates a client for the Ledgerline service at `options.serviceUrl`; options are checked here (INVALID_OPTION). */
export function createClient(options: ClientOptions): LedgerlineClient {
  return new LedgerlineClient(options);
}
