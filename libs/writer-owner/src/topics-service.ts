import { LedgerlineError } from '@ledgerline/errors';
import { SubscriptionType, TopicsService } from '@ledgerline/proto';
import type { ServiceImpl } from '@ledgerline/rpc';
import { DEDUP_CURSOR_NAME } from './deduplication.js';
import { notOwner, subscriptionNotFound } from './errors.js';
import type { OwnedTopic } from './owned-topic.js';
import { entryMessage, positionMessage, receiptMessage, safeNumber, seekTarget } from './proto-mapping.js';
import { ConnectionBudgets, type ConnectionBudgetLease } from './connection-budgets.js';
import { publishStream } from './publish-stream.js';
import { WriterReason } from './reasons.js';
import type { WriterOwner } from './writer-owner.js';

/** Subscriptions whose names start with this are the owner's own (deduplication); clients cannot use them. */
export const RESERVED_SUBSCRIPTION_PREFIX = 'ledgerline.';

export function checkSubscriptionName(name: string): string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new LedgerlineError('INVALID_ARGUMENT', WriterReason.INVALID_REQUEST, 'the request names no subscription');
  }
  if (name.startsWith(RESERVED_SUBSCRIPTION_PREFIX)) {
    throw new LedgerlineError(
      'INVALID_ARGUMENT',
      WriterReason.RESERVED_SUBSCRIPTION_NAME,
      `subscription names starting with '${RESERVED_SUBSCRIPTION_PREFIX}' are reserved`,
    );
  }
  return name;
}

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

/** ledgerline.v1.TopicsService over a WriterOwner. */
export function topicsServiceImpl(owner: WriterOwner): ServiceImpl<typeof TopicsService> {
  const connections = new ConnectionBudgets(owner.settings.maxPendingBytesPerConnection);
  return {
    publish: (requests, context) => {
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
    },

    async publishOne(request, context) {
      const message = request.message;
      if (message === undefined) {
        throw new LedgerlineError('INVALID_ARGUMENT', WriterReason.INVALID_REQUEST, 'PublishOne carries a message');
      }
      const startedMs = performance.now();
      const topic = await owner.topic(message.topic);
      const receipt = await topic.publish(message, context.signal);
      owner.metrics.publishLatency.observe((performance.now() - startedMs) / 1000);
      return { receipt: receiptMessage(receipt) };
    },

    consume: (requests, context) => owner.consume(requests, context),

    async seek(request) {
      const topic = await owner.topic(request.topic);
      requireCursor(topic, request.subscription);
      const position = await owner.seek(topic, request.subscription, seekTarget(request.target));
      return { position: positionMessage(position) };
    },

    async findPosition(request) {
      const topic = await owner.topic(request.topic);
      const target = request.target;
      const found =
        target.case === 'offset'
          ? await topic.ledger.findPosition(safeNumber(target.value, 'offset'))
          : target.case === 'timestampMs'
            ? await topic.ledger.findPositionByTime(safeNumber(target.value, 'timestamp_ms'))
            : undefined;
      if (found === undefined) {
        throw new LedgerlineError('INVALID_ARGUMENT', WriterReason.INVALID_REQUEST, 'give an offset or a time');
      }
      return {
        position: positionMessage(found),
        batchIndex: found.batchIndex,
        beforeEarliest: found.beforeEarliest,
        pastEnd: found.pastEnd,
      };
    },

    async fetchByOffset(request, context) {
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
      const entries = await ledger.readEntries(found, { maxEntries, ...(maxBytes === undefined ? {} : { maxBytes }) });
      topic.rateOut.record(
        entries.reduce((sum, e) => sum + e.numMessages, 0),
        entries.reduce((sum, e) => sum + e.payload.length, 0),
      );
      return { entries: entries.map((e) => entryMessage(e)), nextOffset: BigInt(ledger.lastOffset + 1) };
    },

    async unsubscribe(request) {
      const topic = await owner.topic(request.topic);
      requireCursor(topic, request.subscription);
      if (owner.connectedConsumers(topic, request.subscription) > 0) {
        throw new LedgerlineError(
          'FAILED_PRECONDITION',
          WriterReason.SUBSCRIPTION_BUSY,
          `subscription ${request.subscription} has consumers connected; close them first`,
        );
      }
      await owner.unsubscribed(topic, request.subscription);
      await topic.ledger.deleteCursor(request.subscription);
      return {};
    },

    async getTopicStats(request) {
      const topic = await owner.topic(request.topic);
      const ledger = topic.ledger;
      const stats = ledger.stats();
      const rateIn = topic.rateIn.read();
      const rateOut = topic.rateOut.read();
      const subscriptions = await Promise.all(
        ledger
          .getCursors()
          .filter(
            (cursor) => cursor.name !== DEDUP_CURSOR_NAME && !cursor.name.startsWith(RESERVED_SUBSCRIPTION_PREFIX),
          )
          .map(async (cursor) => {
            const cursorStats = cursor.stats();
            const backlog = await cursor.backlog().catch(() => cursorStats.backlogEntries);
            const live = await owner.subscriptionStats(topic, cursor.name);
            return {
              name: cursor.name,
              backlogMessages: BigInt(backlog),
              markDelete: positionMessage(cursorStats.markDelete),
              ackedRanges: BigInt(cursorStats.ackedRanges),
              cursorStateBytes: BigInt(cursorStats.lastSnapshot?.bytes ?? 0),
              rangesBeyondPersistLimit: BigInt(cursorStats.lastSnapshot?.rangesDropped ?? 0),
              type: live?.type ?? SubscriptionType.UNSPECIFIED,
              unackedMessages: BigInt(live?.unackedMessages ?? 0),
              blockedOnUnacked: live?.blockedOnUnacked ?? false,
              msgRateOut: live?.msgRateOut ?? 0,
              msgThroughputOut: live?.msgThroughputOut ?? 0,
              redeliveredMessages: BigInt(live?.redeliveredMessages ?? 0),
              consumers: live?.consumers ?? [],
            };
          }),
      );
      return {
        entries: BigInt(stats.entries),
        sizeBytes: BigInt(stats.sizeBytes),
        ledgers: stats.ledgers,
        nextOffset: BigInt(stats.lastOffset + 1),
        subscriptions,
        msgRateIn: rateIn.messagesPerSecond,
        msgThroughputIn: rateIn.bytesPerSecond,
        msgRateOut: rateOut.messagesPerSecond,
        msgThroughputOut: rateOut.bytesPerSecond,
        dedupHits: BigInt(topic.dedupHits),
        producers: topic.dedup.producerCount,
        ownerAddress: owner.identity.advertisedAddress,
      };
    },

    async unloadTopic(request) {
      const loaded = owner.registry.find(request.topic);
      if (loaded !== undefined) {
        await owner.registry.unloadTopic(loaded, 'unloaded on request', true);
        return {};
      }
      const answer = await owner.clients.lookup.lookupTopic({ topic: request.topic });
      if (answer.owned && answer.instanceId !== owner.identity.instanceId) {
        throw notOwner(request.topic, answer.advertisedAddress);
      }
      return {};
    },
  };
}
