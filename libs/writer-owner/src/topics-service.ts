import type { MessageInitShape } from '@bufbuild/protobuf';
import { LedgerlineError } from '@ledgerline/errors';
import {
  MAX_FETCH_RESPONSE_BYTES,
  withinWireBytes,
  checkSubscriptionName,
  entryMessage,
  unloadOnRequest,
  OwnerReason,
  positionMessage,
  refuseTrimmedOffset,
  safeNumber,
  seekTarget,
} from '@ledgerline/ownership';
import {
  TopicsService,
  type DeleteRecordsRequest,
  type DeleteRecordsResponseSchema,
  type FetchByOffsetRequest,
  type FetchByOffsetResponseSchema,
  type FindPositionRequest,
  type FindPositionResponseSchema,
  type PublishOneRequest,
  type PublishOneResponseSchema,
  type PublishRequest,
  type SeekRequest,
  type SeekResponseSchema,
  type UnsubscribeRequest,
  type UnsubscribeResponseSchema,
} from '@ledgerline/proto';
import type { CallContext, ServiceImpl } from '@ledgerline/rpc';
import { ConnectionBudgets, type ConnectionBudgetLease } from './connection-budgets.js';
import { subscriptionNotFound, unlessClosedUnder } from './errors.js';
import type { OwnedTopic } from './owned-topic.js';
import { receiptMessage } from './publish-mapping.js';
import { publishStream } from './publish-stream.js';
import { topicProducers } from './producer-list.js';
import { topicStats } from './topic-stats.js';
import type { TopicsOwner } from './owner-view.js';

function requireCursor(topic: OwnedTopic, subscription: string) {
  const cursor = topic.ledger.getCursor(checkSubscriptionName(subscription));
  if (cursor === undefined) throw subscriptionNotFound(topic.name, subscription);
  return cursor;
}

/** A publish stream that gives its connection's budget back when it ends, however it ends. */
async function* releasedAfter<T>(stream: AsyncIterable<T>, lease: ConnectionBudgetLease): AsyncIterable<T> {
  try {
    yield* stream;
  } finally {
    lease.release();
  }
}

/** ledgerline.v1.TopicsService over a writer owner. */
export function topicsServiceImpl(owner: TopicsOwner): ServiceImpl<typeof TopicsService> {
  const connections = new ConnectionBudgets(owner.settings.maxPendingBytesPerConnection);
  return {
    publish: (requests, context) => publish(owner, connections, requests, context),
    publishOne: (request, context) => publishOne(owner, request, context),
    consume: (requests, context) => owner.consume(requests, context),
    seek: (request) => unlessClosedUnder(request.topic, () => seek(owner, request)),
    findPosition: (request) => unlessClosedUnder(request.topic, () => findPosition(owner, request)),
    fetchByOffset: (request, context) => unlessClosedUnder(request.topic, () => fetchByOffset(owner, request, context)),
    unsubscribe: (request) => unlessClosedUnder(request.topic, () => unsubscribe(owner, request)),
    getTopicStats: (request) => unlessClosedUnder(request.topic, () => topicStats(owner, request)),
    unloadTopic: (request) =>
      unloadOnRequest(owner.registry, { clients: owner.clients, instanceId: owner.identity.instanceId }, request.topic),
    deleteRecords: (request) => unlessClosedUnder(request.topic, () => deleteRecords(owner, request)),
    listProducers: (request) => unlessClosedUnder(request.topic, () => topicProducers(owner, request)),
  };
}

/**
 * DeleteRecords: the managed ledger deletes the messages before the offset
 * (-1: every message stored so far) and answers the low watermark.
 */
async function deleteRecords(
  owner: TopicsOwner,
  request: DeleteRecordsRequest,
): Promise<MessageInitShape<typeof DeleteRecordsResponseSchema>> {
  const topic = await owner.topic(request.topic);
  const offset =
    request.beforeOffset === -1n ? topic.ledger.lastOffset + 1 : safeNumber(request.beforeOffset, 'before_offset');
  return { lowWatermark: BigInt(await topic.ledger.deleteRecordsBefore(offset)) };
}

function publish(
  owner: TopicsOwner,
  connections: ConnectionBudgets,
  requests: AsyncIterable<PublishRequest>,
  context: CallContext,
) {
  const connection = connections.take(context.peer);
  return releasedAfter(
    publishStream(requests, context, {
      getTopic: (topic) => owner.topic(topic),
      maxPendingBytes: owner.settings.maxPendingBytesPerStream,
      maxPendingMessages: owner.settings.maxPendingMessagesPerStream,
      maxMessagesPerRequest: owner.settings.maxMessagesPerPublishRequest,
      connectionBudget: connection.budget,
      metrics: owner.metrics,
      draining: owner.drainSignal,
    }),
    connection,
  );
}

async function publishOne(
  owner: TopicsOwner,
  request: PublishOneRequest,
  context: CallContext,
): Promise<MessageInitShape<typeof PublishOneResponseSchema>> {
  const message = request.message;
  if (message === undefined) {
    throw new LedgerlineError('INVALID_ARGUMENT', OwnerReason.INVALID_REQUEST, 'PublishOne carries a message');
  }
  const startedMs = performance.now();
  const topic = await owner.topic(message.topic);
  const receipt = await topic.publish(message, context.signal);
  owner.metrics.publishLatency.observe((performance.now() - startedMs) / 1000);
  return { receipt: receiptMessage(receipt) };
}

async function seek(owner: TopicsOwner, request: SeekRequest): Promise<MessageInitShape<typeof SeekResponseSchema>> {
  const topic = await owner.topic(request.topic);
  requireCursor(topic, request.subscription);
  const position = await owner.seek(topic, request.subscription, seekTarget(request.target));
  return { position: positionMessage(position) };
}

async function findPosition(
  owner: TopicsOwner,
  request: FindPositionRequest,
): Promise<MessageInitShape<typeof FindPositionResponseSchema>> {
  const topic = await owner.topic(request.topic);
  const target = request.target;
  const found =
    target.case === 'offset'
      ? await topic.ledger.findPosition(safeNumber(target.value, 'offset'))
      : target.case === 'timestampMs'
        ? await topic.ledger.findPositionByTime(safeNumber(target.value, 'timestamp_ms'), {
            byEventTime: request.byEventTime,
          })
        : undefined;
  if (found === undefined) {
    throw new LedgerlineError('INVALID_ARGUMENT', OwnerReason.INVALID_REQUEST, 'give an offset or a time');
  }
  return {
    position: positionMessage(found),
    batchIndex: found.batchIndex,
    beforeEarliest: found.beforeEarliest,
    pastEnd: found.pastEnd,
    offset: BigInt(found.offset),
  };
}

async function fetchByOffset(
  owner: TopicsOwner,
  request: FetchByOffsetRequest,
  context: CallContext,
): Promise<MessageInitShape<typeof FetchByOffsetResponseSchema>> {
  const topic = await owner.topic(request.topic);
  const offset = safeNumber(request.offset, 'offset');
  const maxEntries = Math.min(Math.max(request.maxEntries, 1), owner.settings.maxFetchEntries);
  const maxBytes = request.maxBytes > 0n ? safeNumber(request.maxBytes, 'max_bytes') : undefined;
  const maxWaitMs = Math.min(safeNumber(request.maxWaitMs, 'max_wait_ms'), owner.settings.maxFetchWaitMs);
  const ledger = topic.ledger;
  if (offset > ledger.lastOffset && maxWaitMs > 0) {
    await ledger.waitForEntries({ timeoutMs: maxWaitMs, signal: context.signal });
  }
  if (offset > ledger.lastOffset) return { entries: [], nextOffset: BigInt(ledger.lastOffset + 1) };
  const found = await ledger.findPosition(offset);
  refuseTrimmedOffset(request.topic, request.offset, found);
  const read = await ledger.readEntries(found, { maxEntries, ...(maxBytes === undefined ? {} : { maxBytes }) });
  // max_bytes bounds stored bytes; the response is also bounded by what it takes on the wire.
  const entries = withinWireBytes(read, (e) => entryMessage(e), MAX_FETCH_RESPONSE_BYTES);
  const sent = read.slice(0, entries.length);
  topic.rateOut.record(
    sent.reduce((sum, e) => sum + e.numMessages, 0),
    sent.reduce((sum, e) => sum + e.payload.length, 0),
  );
  return { entries, nextOffset: BigInt(ledger.lastOffset + 1) };
}

async function unsubscribe(
  owner: TopicsOwner,
  request: UnsubscribeRequest,
): Promise<MessageInitShape<typeof UnsubscribeResponseSchema>> {
  const topic = await owner.topic(request.topic);
  requireCursor(topic, request.subscription);
  if (owner.connectedConsumers(topic, request.subscription) > 0) {
    throw new LedgerlineError(
      'FAILED_PRECONDITION',
      OwnerReason.SUBSCRIPTION_BUSY,
      `subscription ${request.subscription} has consumers connected; close them first`,
    );
  }
  await owner.unsubscribed(topic, request.subscription);
  await topic.ledger.deleteCursor(request.subscription);
  return {};
}
