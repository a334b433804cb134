import type { MessageInitShape } from '@bufbuild/protobuf';
import type { ManagedCursor } from '@ledgerline/managed-ledger';
import {
  earliestOffset,
  ledgerStatsMessages,
  positionMessage,
  RESERVED_SUBSCRIPTION_PREFIX,
} from '@ledgerline/ownership';
import {
  SubscriptionType,
  type GetTopicStatsRequest,
  type GetTopicStatsResponseSchema,
  type SubscriptionStatsSchema,
} from '@ledgerline/proto';
import { DEDUP_CURSOR_NAME } from './deduplication.js';
import type { OwnedTopic } from './owned-topic.js';
import type { StatsOwner } from './owner-view.js';

/** GetTopicStats: the topic's ledgers, its rates, and every client subscription with its live side. */
export async function topicStats(
  owner: StatsOwner,
  request: GetTopicStatsRequest,
): Promise<MessageInitShape<typeof GetTopicStatsResponseSchema>> {
  const topic = await owner.topic(request.topic);
  const ledger = topic.ledger;
  const stats = ledger.stats();
  const views = ledger.ledgers();
  const rateIn = topic.rateIn.read();
  const rateOut = topic.rateOut.read();
  const subscriptions = await Promise.all(
    ledger
      .getCursors()
      .filter((cursor) => cursor.name !== DEDUP_CURSOR_NAME && !cursor.name.startsWith(RESERVED_SUBSCRIPTION_PREFIX))
      .map((cursor) => subscriptionStats(owner, topic, cursor)),
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
    ledgerStats: ledgerStatsMessages(views),
    // Records deleted before an offset are gone even where their ledger is kept.
    earliestOffset: BigInt(Math.max(earliestOffset(views, stats.lastOffset + 1), ledger.lowWatermark)),
  };
}

async function subscriptionStats(
  owner: StatsOwner,
  topic: OwnedTopic,
  cursor: ManagedCursor,
): Promise<MessageInitShape<typeof SubscriptionStatsSchema>> {
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
}
