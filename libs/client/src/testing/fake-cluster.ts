import type { Server } from '@grpc/grpc-js';
import { LedgerlineError, type CodeName } from '@ledgerline/errors';
import {
  AdminService,
  LookupService,
  OwnerRole,
  TopicsService,
  type PublishMessage,
  type SeekRequest,
} from '@ledgerline/proto';
import {
  bindInsecure,
  createGrpcServer,
  registerService,
  RpcReason,
  type CallContext,
  type ServiceImpl,
} from '@ledgerline/rpc';
import { ServiceReason } from '../client-reason.js';
import { FakeConsumeService } from './fake-consume.js';
import { FakePublishService } from './fake-publish.js';
import { canonicalTopic, FakeClusterReason, partial, type OpenStream, type OwnerHost } from './fake-rpc.js';
import type { FakeSubscription } from './fake-subscription.js';
import { FakeTopic } from './fake-topic.js';

/** Settings of a fake cluster. */
export interface FakeClusterOptions {
  /** How many owner instances serve topics. Default 2. */
  owners?: number;
  /**
   * Entries the owners read per Publish request and announce (PublishResponse.max_messages_per_request).
   * Default 1,000, as a writer owner; 0 plays an owner that predates coalescing: it announces nothing
   * and reads only each request's `message`.
   */
  maxMessagesPerPublishRequest?: number;
}

export { canonicalTopic };

/**
 * An in-memory Ledgerline for client tests, over real gRPC on loopback: a
 * metadata address serving LookupTopic and GetTopic, and owner addresses
 * serving TopicsService from one shared store (as real owners share the
 * ledger store). Topics move between owners, connections drop and receipts
 * get lost on demand, so reconnect and resend paths run deterministically.
 */
export class FakeCluster {
  private readonly topics = new Map<string, FakeTopic>();
  private readonly partitionCounts = new Map<string, number>();
  private readonly owners = new Map<string, number>();
  private readonly streams = new Set<OpenStream>();
  /** FindPosition and FetchByOffset calls answered, for tests that count round trips. */
  findPositionCalls = 0;
  fetchByOffsetCalls = 0;
  /** The max_entries of every FetchByOffset call answered, in order. */
  readonly fetchMaxEntries: number[] = [];
  private servers: Server[] = [];
  /** The metadata service's address: the client's serviceUrl. */
  serviceUrl = '';
  /** The owners' addresses, by owner index. */
  ownerAddresses: string[] = [];
  private readonly host: OwnerHost = {
    owned: (owner, topic) => this.owned(owner, topic),
    openStream: (owner, context) => this.openStream(owner, context),
    closeStream: (stream) => this.streams.delete(stream),
  };
  /** The Consume side: subscriptions, and ack receipts held, released or lost on demand. */
  readonly consume = new FakeConsumeService(this.host);
  private publisher = new FakePublishService(this.host, 1_000);
  /** Lookups answered (for assertions on caching). */
  lookups = 0;
  /** While true, a lookup of a missing topic creates it (non-partitioned), as a namespace allowing auto-creation does. */
  autoCreateTopics = false;

  /** Starts the metadata address and the owners on free loopback ports. */
  static async start(options: FakeClusterOptions = {}): Promise<FakeCluster> {
    const cluster = new FakeCluster();
    cluster.publisher = new FakePublishService(cluster.host, options.maxMessagesPerPublishRequest ?? 1_000);
    await cluster.listen(options.owners ?? 2);
    return cluster;
  }

  /** Creates a topic (with N partitions when partitions > 0), owned by owner 0. */
  createTopic(topic: string, partitions = 0): void {
    const name = canonicalTopic(topic);
    this.partitionCounts.set(name, partitions);
    const names =
      partitions === 0 ? [name] : Array.from({ length: partitions }, (_, index) => `${name}-partition-${index}`);
    for (const each of names) {
      this.topics.set(each, new FakeTopic());
      this.owners.set(each, 0);
    }
  }

  /** The fake topic (or partition), for assertions. */
  topic(topic: string): FakeTopic {
    const found = this.topics.get(canonicalTopic(topic));
    if (found === undefined) throw new Error(`no fake topic ${topic}`);
    return found;
  }

  /** A subscription's state, for assertions. */
  subscription(topic: string, subscription: string): FakeSubscription | undefined {
    return this.consume.subscription(topic, subscription);
  }

  /** Every entry the owners received (for assertions on batching). */
  get published(): readonly PublishMessage[] {
    return this.publisher.published;
  }

  /** How many entries each Publish request the owners read carried, in order (for assertions on coalescing). */
  get entriesPerRequest(): readonly number[] {
    return this.publisher.entriesPerRequest;
  }

  /** While true, owners apply acks but hold their receipts back; see FakeConsumeService. */
  get holdAckReceipts(): boolean {
    return this.consume.holdAckReceipts;
  }
  set holdAckReceipts(hold: boolean) {
    this.consume.holdAckReceipts = hold;
  }

  /** The payloads stored in a topic, in order, as UTF-8 text. */
  storedTexts(topic: string): string[] {
    return this.topic(topic).entries.flatMap((entry) =>
      entry.messages.map((message) => Buffer.from(message.payload).toString()),
    );
  }

  ownerOf(topic: string): number {
    return this.owners.get(canonicalTopic(topic)) ?? 0;
  }

  /**
   * Moves a topic to another owner: the old one refuses with NOT_OWNER (naming
   * the new owner) and ends its consume streams with TOPIC_UNLOADED. Clients
   * that cached the old owner find out from the refusal.
   */
  moveTopic(topic: string, to: number): void {
    const name = canonicalTopic(topic);
    const from = this.ownerOf(name);
    this.owners.set(name, to);
    const unloaded = new LedgerlineError('FAILED_PRECONDITION', ServiceReason.TOPIC_UNLOADED, `${name} was unloaded`);
    for (const stream of this.streams) {
      if (stream.owner === from && stream.topic === name && this.isConsumeStream(stream)) stream.abort.abort(unloaded);
    }
  }

  /** Ends every open stream of an owner with UNAVAILABLE, as a dropped connection does. */
  dropConnections(owner: number): void {
    const dropped = new LedgerlineError(
      'UNAVAILABLE',
      FakeClusterReason.CONNECTION_LOST,
      `owner ${owner} dropped its connections`,
    );
    for (const stream of this.streams) if (stream.owner === owner) stream.abort.abort(dropped);
  }

  /** Ends every open stream of an owner with CANCELLED, as a server that closes its connections at its drain bound does. */
  cancelStreams(owner: number): void {
    const cancelled = new LedgerlineError('CANCELLED', RpcReason.CANCELLED, 'Call cancelled');
    for (const stream of this.streams) if (stream.owner === owner) stream.abort.abort(cancelled);
  }

  /** The next `count` entries published to the topic are stored, but their stream breaks before the receipt. */
  loseReceipts(topic: string, count: number): void {
    this.publisher.loseReceipts(topic, count);
  }

  /** The next publish to the topic is refused with this code and reason (a PublishFailure). */
  refuseNext(topic: string, code: CodeName, reason: string): void {
    this.publisher.refuseNext(topic, code, reason);
  }

  /** The entry with this sequence id is refused with this code and reason (a PublishFailure), once. */
  refuseSequenceId(topic: string, sequenceId: bigint, code: CodeName, reason: string): void {
    this.publisher.refuseSequenceId(topic, sequenceId, code, reason);
  }

  /** Open streams (publish and consume) per owner. */
  openStreams(owner: number): number {
    return [...this.streams].filter((stream) => stream.owner === owner).length;
  }

  close(): Promise<void> {
    for (const stream of this.streams)
      stream.abort.abort(new LedgerlineError('UNAVAILABLE', FakeClusterReason.SHUTTING_DOWN, 'closing'));
    // Tests end with calls still open (a consumer never closed): no graceful drain.
    for (const server of this.servers) server.forceShutdown();
    return Promise.resolve();
  }

  private isConsumeStream(stream: OpenStream): boolean {
    return this.consume.isConsumeStream(stream);
  }

  private async listen(owners: number): Promise<void> {
    const metadata = createGrpcServer();
    registerService(
      metadata,
      LookupService,
      partial<ServiceImpl<typeof LookupService>>({ lookupTopic: (request) => this.lookup(request.topic) }),
    );
    registerService(
      metadata,
      AdminService,
      partial<ServiceImpl<typeof AdminService>>({ getTopic: (request) => this.getTopic(request.topic) }),
    );
    this.serviceUrl = `127.0.0.1:${await bindInsecure(metadata, '127.0.0.1', 0)}`;
    this.servers.push(metadata);
    for (let owner = 0; owner < owners; owner++) {
      const server = createGrpcServer();
      registerService(server, TopicsService, this.topicsService(owner));
      this.ownerAddresses.push(`127.0.0.1:${await bindInsecure(server, '127.0.0.1', 0)}`);
      this.servers.push(server);
    }
  }

  private lookup(topic: string) {
    this.lookups++;
    const name = canonicalTopic(topic);
    if (!this.topics.has(name) && this.autoCreateTopics) this.createTopic(name);
    if (!this.topics.has(name))
      throw new LedgerlineError('NOT_FOUND', ServiceReason.TOPIC_NOT_FOUND, `${name} does not exist`);
    const owner = this.ownerOf(name);
    return {
      instanceId: `owner-${owner}`,
      advertisedAddress: this.ownerAddresses[owner]!,
      role: OwnerRole.WRITER,
      owned: true,
    };
  }

  private getTopic(topic: string) {
    const name = canonicalTopic(topic);
    const partitions = this.partitionCounts.get(name);
    if (partitions === undefined)
      throw new LedgerlineError('NOT_FOUND', ServiceReason.TOPIC_NOT_FOUND, `${name} does not exist`);
    return { topic: { name, partitions } };
  }

  /** The topic, checked to exist and to be owned by `owner` (else NOT_OWNER naming the owner). */
  private owned(owner: number, topic: string): FakeTopic {
    const name = canonicalTopic(topic);
    const found = this.topics.get(name);
    if (found === undefined)
      throw new LedgerlineError('NOT_FOUND', ServiceReason.TOPIC_NOT_FOUND, `${name} does not exist`);
    const current = this.ownerOf(name);
    if (current !== owner) {
      throw new LedgerlineError('FAILED_PRECONDITION', ServiceReason.NOT_OWNER, `owner ${owner} does not own ${name}`, {
        details: { owner_address: this.ownerAddresses[current]! },
      });
    }
    return found;
  }

  private openStream(owner: number, context: CallContext): OpenStream {
    const stream: OpenStream = { owner, topic: undefined, abort: new AbortController() };
    context.signal.addEventListener('abort', () => stream.abort.abort(context.signal.reason), { once: true });
    this.streams.add(stream);
    return stream;
  }

  private seek(owner: number, request: SeekRequest) {
    const topic = this.owned(owner, request.topic);
    const subscription = this.subscription(request.topic, request.subscription);
    if (subscription === undefined)
      throw new LedgerlineError('NOT_FOUND', ServiceReason.SUBSCRIPTION_NOT_FOUND, 'no such subscription');
    const target = request.target;
    const index =
      target.case === 'offset'
        ? topic.indexOfOffset(target.value)
        : target.case === 'position'
          ? Number(target.value.entryId)
          : target.case === 'timestampMs'
            ? topic.entries.findIndex((entry) => entry.timestampMs >= target.value)
            : 0;
    subscription.seek(index === -1 ? topic.entries.length : index);
    return {};
  }

  private topicsService(owner: number): ServiceImpl<typeof TopicsService> {
    return partial<ServiceImpl<typeof TopicsService>>({
      publish: (requests, context) => this.publisher.publish(owner, requests, context),
      consume: (requests, context) => this.consume.consume(owner, requests, context),
      publishOne: (request) => {
        const stream: OpenStream = { owner, topic: undefined, abort: new AbortController() };
        const response = this.publisher.publishOne(owner, stream, request.message!);
        if (response.result?.case === 'failure') {
          const failure = response.result.value;
          throw new LedgerlineError('FAILED_PRECONDITION', failure.reason!, failure.message ?? '', {
            details: failure.details ?? {},
          });
        }
        return { receipt: response.result!.value };
      },
      seek: (request) => this.seek(owner, request),
      unsubscribe: (request) => {
        this.owned(owner, request.topic);
        this.consume.subscriptions.delete(`${canonicalTopic(request.topic)}\n${request.subscription}`);
        return {};
      },
      findPosition: (request) => {
        const topic = this.owned(owner, request.topic);
        this.findPositionCalls++;
        const target = request.target;
        if (target.case !== 'timestampMs') throw new Error('the fake finds positions by time only');
        const index = topic.entries.findIndex((entry) => entry.timestampMs >= target.value);
        const entry = index === -1 ? undefined : topic.entries[index];
        return {
          ...(entry === undefined ? {} : { position: { ledgerId: entry.ledgerId, entryId: entry.entryId } }),
          offset: entry?.firstOffset ?? topic.nextOffset,
          pastEnd: entry === undefined,
        };
      },
      fetchByOffset: async (request, context) => {
        const topic = this.owned(owner, request.topic);
        this.fetchByOffsetCalls++;
        this.fetchMaxEntries.push(request.maxEntries);
        if (request.offset < topic.earliestOffset) {
          throw new LedgerlineError(
            'OUT_OF_RANGE',
            ServiceReason.OFFSET_TRIMMED,
            `offset ${request.offset} was trimmed`,
            {
              details: { offset: String(request.offset), earliest_offset: String(topic.earliestOffset) },
            },
          );
        }
        if (topic.indexOfOffset(request.offset) >= topic.entries.length && request.maxWaitMs > 0n) {
          await topic.waitForAppend(Number(request.maxWaitMs), context.signal);
        }
        const first = topic.indexOfOffset(request.offset);
        const count = Math.max(1, request.maxEntries);
        const entries = topic.entries.slice(first, first + count).map((_, at) => topic.wireEntry(first + at, 0));
        return { entries, nextOffset: topic.nextOffset };
      },
      getTopicStats: (request) => {
        const name = canonicalTopic(request.topic);
        const topic = this.owned(owner, name);
        const subscriptions = [...this.consume.subscriptions]
          .filter(([key]) => key.startsWith(`${name}\n`))
          .map(([key, subscription]) => ({
            name: key.slice(name.length + 1),
            backlogMessages: BigInt(subscription.backlog),
            type: subscription.type,
          }));
        return {
          entries: BigInt(topic.entries.length),
          nextOffset: topic.nextOffset,
          ledgers: 1,
          subscriptions,
          ownerAddress: this.ownerAddresses[owner]!,
        };
      },
      unloadTopic: (request) => {
        this.owned(owner, request.topic);
        this.moveTopic(request.topic, (owner + 1) % this.ownerAddresses.length);
        return {};
      },
    });
  }
}
