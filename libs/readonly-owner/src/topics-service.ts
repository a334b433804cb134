import type { MessageInitShape } from '@bufbuild/protobuf';
import { LedgerlineError } from '@ledgerline/errors';
import { TopicName } from '@ledgerline/naming';
import {
  MAX_FETCH_RESPONSE_BYTES,
  withinWireBytes,
  checkSubscriptionName,
  consumeStream,
  consumerOptions,
  entryDelivery,
  entryMessage,
  unloadOnRequest,
  OwnerReason,
  positionFromRequest,
  positionMessage,
  refuseTrimmedOffset,
  safeNumber,
  seekTarget,
  subscriptionStart,
  subscriptionTypeOf,
  type LoadMeter,
  type WireConsumeSession,
  type MetadataClients,
  type OwnerIdentity,
  type WriterEntry,
} from '@ledgerline/ownership';
import {
  TopicsService,
  type FetchByOffsetRequest,
  type FetchByOffsetResponseSchema,
  type PublishMessage,
  type PublishResponseSchema,
  type SeekRequest,
  type SeekResponseSchema,
  type Subscribe,
  type UnsubscribeRequest,
  type UnsubscribeResponseSchema,
} from '@ledgerline/proto';
import type { CallContext, ServiceImpl } from '@ledgerline/rpc';
import type { ConsumerSink } from '@ledgerline/subscriptions';
import type { ReadOnlyMetrics } from './metrics.js';
import type { ReadOnlyRegistry } from './topic-registry.js';
import { readOnlyTopicStats, type ReadOnlyStatsOwner } from './topic-stats.js';
import type { WriterClients } from './writer-clients.js';

/**
 * What TopicsService reads of the read-only owner: readonly-owner.ts builds this, so importing its class
 * would close a circle.
 */
export interface ReadOnlyTopicsOwner extends ReadOnlyStatsOwner {
  readonly identity: Pick<OwnerIdentity, 'instanceId' | 'advertisedAddress'>;
  readonly clients: Pick<MetadataClients, 'lookup'>;
  readonly metrics: ReadOnlyMetrics;
  readonly load: Pick<LoadMeter, 'countConsumer'>;
  readonly registry: ReadOnlyRegistry;
  readonly writer: WriterClients;
}

/** Every write is refused on a read-only owner, naming the writer topic to publish to. */
function readOnlyTopic(topic: string, writerTopic: string): LedgerlineError {
  return new LedgerlineError(
    'FAILED_PRECONDITION',
    OwnerReason.READONLY_TOPIC,
    `${topic} is served read-only here: publish to ${writerTopic} through its writer owner`,
    { details: { topic, writer_topic: writerTopic } },
  );
}

async function refuseWrite(owner: ReadOnlyTopicsOwner, message: PublishMessage | undefined): Promise<never> {
  if (message === undefined) {
    throw new LedgerlineError('INVALID_ARGUMENT', OwnerReason.INVALID_REQUEST, 'a publish carries a message');
  }
  const topic = await owner.topic(message.topic);
  throw readOnlyTopic(message.topic, topic.writerTopic);
}

/** A publish stream ends at its first request, refused. */
async function* refusePublishStream(
  owner: ReadOnlyTopicsOwner,
  requests: AsyncIterable<{ message?: PublishMessage }>,
): AsyncIterable<MessageInitShape<typeof PublishResponseSchema>> {
  for await (const request of requests) yield await refuseWrite(owner, request.message);
}

async function subscribe(
  owner: ReadOnlyTopicsOwner,
  request: Subscribe,
  sink: ConsumerSink<WriterEntry>,
): Promise<WireConsumeSession<WriterEntry>> {
  const topic = await owner.topic(request.topic);
  const name = checkSubscriptionName(request.subscription);
  const type = subscriptionTypeOf(request);
  if ((request.deadLetter?.maxRedeliveries ?? 0) > 0) {
    // Dead-lettering publishes: it is a write, which belongs to the writer group.
    throw readOnlyTopic(request.topic, topic.writerTopic);
  }
  const { subscription, source } = await topic.open(name, subscriptionStart(request));
  const consumer = subscription.addConsumer(consumerOptions(request, type, sink));
  // The topic's counter children, looked up once per stream rather than by label on every delivery.
  const messagesOut = owner.metrics.messagesOut.labels({ topic: topic.readerTopic });
  const bytesOut = owner.metrics.bytesOut.labels({ topic: topic.readerTopic });
  return {
    topic: request.topic,
    consumer,
    markDelete: () => source.markDeletePosition(),
    flush: () => source.flush(),
    toWire: (delivery) => {
      const wire = entryDelivery(delivery);
      messagesOut.inc(wire.messageCount);
      bytesOut.inc(wire.payloadBytes);
      return wire;
    },
  };
}

/**
 * ledgerline.v1.TopicsService on a read-only owner: Consume, Seek, offset
 * lookups and fetches, Unsubscribe and stats for reader topics (named by
 * their reader or their writer name); every write is FAILED_PRECONDITION /
 * READONLY_TOPIC naming the writer topic.
 */
export function readOnlyTopicsServiceImpl(owner: ReadOnlyTopicsOwner): ServiceImpl<typeof TopicsService> {
  return {
    publish: (requests) => refusePublishStream(owner, requests),
    publishOne: (request) => refuseWrite(owner, request.message),
    consume: (requests, context) =>
      owner.load.countConsumer(
        consumeStream<WriterEntry>(requests, context, (request, sink) => subscribe(owner, request, sink)),
      ),
    seek: (request) => seek(owner, request),
    // The offset index lives with the writer's ledgers' metadata; the lookup is one cheap call there.
    findPosition: async (request) => {
      const topic = await owner.topic(request.topic);
      return owner.writer.call(topic.writerTopic, (c) =>
        c.topics.findPosition({ ...request, topic: topic.writerTopic }, owner.writer.callOptions),
      );
    },
    fetchByOffset: (request, context) => fetchByOffset(owner, request, context),
    // Deleting records is a write: it belongs to the writer group.
    deleteRecords: async (request) => {
      const topic = await owner.topic(request.topic);
      throw readOnlyTopic(request.topic, topic.writerTopic);
    },
    // The producers' deduplication state is the writer's.
    listProducers: async (request) => {
      const topic = await owner.topic(request.topic);
      throw readOnlyTopic(request.topic, topic.writerTopic);
    },
    unsubscribe: (request) => unsubscribe(owner, request),
    getTopicStats: (request) => readOnlyTopicStats(owner, request),
    unloadTopic: (request) =>
      unloadOnRequest(
        owner.registry,
        { clients: owner.clients, instanceId: owner.identity.instanceId },
        request.topic,
        TopicName.parse(request.topic).toString(),
      ),
  };
}

async function seek(
  owner: ReadOnlyTopicsOwner,
  request: SeekRequest,
): Promise<MessageInitShape<typeof SeekResponseSchema>> {
  const topic = await owner.topic(request.topic);
  const name = checkSubscriptionName(request.subscription);
  const target = seekTarget(request.target);
  const live = topic.live(name);
  if (live !== undefined) return { position: positionMessage(await live.subscription.seek(target)) };
  // No consumers here: the reset goes to the writer, where the cursor is (NOT_FOUND when it has none).
  await owner.writer.call(topic.writerTopic, (c) =>
    c.cursors.getCursorSummary({ topic: topic.writerTopic, subscription: name, cells: 1 }, owner.writer.callOptions),
  );
  const opened = await topic.open(name, { initialPosition: 'latest' });
  return { position: positionMessage(await opened.subscription.seek(target)) };
}

async function fetchByOffset(
  owner: ReadOnlyTopicsOwner,
  request: FetchByOffsetRequest,
  context: CallContext,
): Promise<MessageInitShape<typeof FetchByOffsetResponseSchema>> {
  const topic = await owner.topic(request.topic);
  const maxEntries = Math.min(Math.max(request.maxEntries, 1), 1_000);
  const found = await owner.writer.call(topic.writerTopic, (c) =>
    c.topics.findPosition(
      { topic: topic.writerTopic, target: { case: 'offset', value: request.offset } },
      owner.writer.callOptions,
    ),
  );
  refuseTrimmedOffset(request.topic, request.offset, found);
  const from = positionFromRequest(found.position);
  let entries = found.pastEnd ? [] : await topic.view.readEntries(from, maxEntries);
  const maxWaitMs = Math.min(safeNumber(request.maxWaitMs, 'max_wait_ms'), 30_000);
  if (entries.length === 0 && maxWaitMs > 0) {
    await topic.view.waitForEntries(from, AbortSignal.any([context.signal, AbortSignal.timeout(maxWaitMs)]));
    entries = await topic.view.readEntries(from, maxEntries);
  }
  // As on the writer owner: bounded by what the response takes on the wire, not only by entry count.
  const sent = withinWireBytes(entries, (e) => entryMessage(e), MAX_FETCH_RESPONSE_BYTES);
  const last = sent[sent.length - 1];
  return {
    entries: sent,
    nextOffset: last === undefined ? request.offset : (last.lastOffset ?? -1n) + 1n,
  };
}

async function unsubscribe(
  owner: ReadOnlyTopicsOwner,
  request: UnsubscribeRequest,
): Promise<MessageInitShape<typeof UnsubscribeResponseSchema>> {
  const topic = await owner.topic(request.topic);
  const name = checkSubscriptionName(request.subscription);
  const live = topic.live(name);
  if (live !== undefined && live.subscription.consumerCount > 0) {
    throw new LedgerlineError(
      'FAILED_PRECONDITION',
      OwnerReason.SUBSCRIPTION_BUSY,
      `subscription ${name} has consumers connected; close them first`,
    );
  }
  await topic.drop(name, new LedgerlineError('NOT_FOUND', OwnerReason.SUBSCRIPTION_NOT_FOUND, `${name} was deleted`));
  await owner.writer.call(topic.writerTopic, (c) =>
    c.cursors.deleteCursor({ topic: topic.writerTopic, subscription: name }, owner.writer.callOptions),
  );
  return {};
}
