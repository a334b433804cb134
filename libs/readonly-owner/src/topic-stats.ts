import type { MessageInitShape } from '@bufbuild/protobuf';
import { earliestOffset, ledgerStatsMessages, positionMessage, type OwnerIdentity } from '@ledgerline/ownership';
import { SubscriptionType, type GetTopicStatsRequest, type GetTopicStatsResponseSchema } from '@ledgerline/proto';
import type { ReadOnlyTopic } from './readonly-topic.js';

/**
 * What GetTopicStats reads of the read-only owner: readonly-owner.ts builds this, so importing its class
 * would close a circle.
 */
export interface ReadOnlyStatsOwner {
  readonly identity: Pick<OwnerIdentity, 'advertisedAddress'>;
  topic(name: string): Promise<ReadOnlyTopic>;
}

/**
 * GetTopicStats on a read-only owner: the ledgers its view holds and the
 * subscriptions consumed through this instance (the cursors themselves are
 * the writer owner's, which reports every subscription).
 */
export async function readOnlyTopicStats(
  owner: ReadOnlyStatsOwner,
  request: GetTopicStatsRequest,
): Promise<MessageInitShape<typeof GetTopicStatsResponseSchema>> {
  const topic = await owner.topic(request.topic);
  const views = topic.view.ledgers();
  const subscriptions = await Promise.all(
    topic.liveSubscriptions().map(async ([name, { subscription, source }]) => {
      const stats = await subscription.stats();
      return {
        name,
        backlogMessages: BigInt(await source.backlog()),
        markDelete: positionMessage(source.markDeletePosition()),
        type: SubscriptionType.UNSPECIFIED,
        unackedMessages: BigInt(stats.unackedMessages),
        blockedOnUnacked: stats.blockedOnUnacked,
        msgRateOut: stats.msgRateOut,
        msgThroughputOut: stats.msgThroughputOut,
        redeliveredMessages: BigInt(stats.redeliveredMessages),
      };
    }),
  );
  return {
    entries: BigInt(views.reduce((sum, v) => sum + v.entries, 0)),
    ledgers: views.length,
    subscriptions,
    ownerAddress: owner.identity.advertisedAddress,
    ledgerStats: ledgerStatsMessages(views),
    earliestOffset: BigInt(earliestOffset(views, (views.at(-1)?.lastOffset ?? -1) + 1)),
  };
}
