import type { MessageInitShape } from '@bufbuild/protobuf';
import { LedgerlineError } from '@ledgerline/errors';
import { TopicName } from '@ledgerline/naming';
import {
  OwnerRole,
  type GetTopicStatsResponse,
  type GetTopicSummaryResponseSchema,
  type PartitionSummarySchema,
  type ReadonlyOwnerRowSchema,
  type SubscriptionRowSchema,
  type SubscriptionStats,
} from '@ledgerline/proto';
import pMap from 'p-map';
import type { Caller } from './caller.js';
import type { ConsoleContext } from './console-context.js';
import { FAN_OUT_CONCURRENCY, MAX_SUMMARY_PARTITIONS } from './limits.js';

type PartitionSummary = MessageInitShape<typeof PartitionSummarySchema>;

export function subscriptionRow(stats: SubscriptionStats): MessageInitShape<typeof SubscriptionRowSchema> {
  return {
    name: stats.name,
    type: stats.type,
    backlogMessages: stats.backlogMessages,
    ...(stats.markDelete === undefined ? {} : { markDelete: stats.markDelete }),
    ackedRanges: stats.ackedRanges,
    unackedMessages: stats.unackedMessages,
    redeliveredMessages: stats.redeliveredMessages,
    consumers: stats.consumers.length,
    messagesOutPerSecond: stats.msgRateOut,
  };
}

function partitionFromStats(topic: string, index: number, stats: GetTopicStatsResponse): PartitionSummary {
  return {
    topic,
    index,
    ownerAddress: stats.ownerAddress,
    earliestOffset: stats.earliestOffset,
    latestOffset: stats.nextOffset,
    entries: stats.entries,
    sizeBytes: stats.sizeBytes,
    ledgers: stats.ledgerStats.map((ledger) => ({
      ledgerId: ledger.ledgerId,
      entries: ledger.entries,
      sizeBytes: ledger.sizeBytes,
      firstOffset: ledger.firstOffset,
      lastOffset: ledger.lastOffset,
      minBrokerTimestampMs: ledger.minBrokerTimestampMs,
      maxBrokerTimestampMs: ledger.maxBrokerTimestampMs,
      open: ledger.open,
    })),
    producers: stats.producers,
    subscriptions: stats.subscriptions.map(subscriptionRow),
    backlogMessages: stats.subscriptions.reduce(
      (slowest, subscription) => (subscription.backlogMessages > slowest ? subscription.backlogMessages : slowest),
      0n,
    ),
    messagesInPerSecond: stats.msgRateIn,
    messagesOutPerSecond: stats.msgRateOut,
  };
}

/**
 * One partition's stats from its owner. A partition whose owner cannot be
 * reached is shown with the reason, so one bad owner does not blank the page;
 * a refusal of the caller's rights fails the whole page.
 */
async function partitionSummary(
  context: ConsoleContext,
  caller: Caller,
  topic: string,
  index: number,
): Promise<PartitionSummary> {
  try {
    const stats = await context.backends.atOwner(topic, caller, (owner) =>
      owner.topics.getTopicStats({ topic }, caller.callOptions()),
    );
    return partitionFromStats(topic, index, stats);
  } catch (thrown) {
    const error = LedgerlineError.from(thrown);
    if (['UNAUTHENTICATED', 'PERMISSION_DENIED', 'NOT_FOUND', 'INVALID_ARGUMENT'].includes(error.code)) throw error;
    return { topic, index, errorReason: error.reason, errorMessage: error.message };
  }
}

/**
 * The read-only owners serving the topic (PIP-63): for each group of live
 * read-only owners, the one a lookup through that group names, when it holds
 * the topic now (a lookup that would only place it is not shown as serving).
 */
async function readonlyOwners(context: ConsoleContext, caller: Caller, topic: string) {
  const { lookup } = context.backends;
  // Listing owners is a super-user's call: another caller sees the topic without its read-only owners.
  const listed = await lookup.listOwners({ role: OwnerRole.READONLY }, caller.callOptions()).catch((thrown) => {
    if (LedgerlineError.from(thrown).code === 'PERMISSION_DENIED') return { owners: [] };
    throw thrown;
  });
  const groups = [...new Set(listed.owners.map((owner) => owner.group))];
  const rows = await pMap(
    groups,
    async (group) => {
      const found = await lookup.lookupTopic({ topic, group }, caller.callOptions()).catch(() => undefined);
      if (found === undefined || !found.owned || found.role !== OwnerRole.READONLY) return undefined;
      const row: MessageInitShape<typeof ReadonlyOwnerRowSchema> = {
        instanceId: found.instanceId,
        group,
        advertisedAddress: found.advertisedAddress,
        readerTopic: found.redirectTopic,
      };
      return row;
    },
    { concurrency: FAN_OUT_CONCURRENCY },
  );
  return rows.filter((row) => row !== undefined);
}

/**
 * The topic page: every partition's ledgers, offsets, producers and
 * subscriptions, and who serves it. A partitioned topic lists its partitions
 * (at most MAX_SUMMARY_PARTITIONS); one partition's page names the
 * partitioned topic it belongs to and its index.
 */
export async function topicSummary(
  context: ConsoleContext,
  caller: Caller,
  name: string,
): Promise<MessageInitShape<typeof GetTopicSummaryResponseSchema>> {
  const parsed = TopicName.parse(name);
  const info = await context.backends.admin.getTopic({ topic: parsed.toString() }, caller.callOptions());
  const partitions = info.topic?.partitions ?? 0;
  // Partition names exist only as partitions of a partitioned topic (the metadata service refuses
  // them to a topic of its own), so a name of that form that exists is one.
  const ofPartitioned = partitions === 0 && parsed.isPartitioned ? parsed.partitionedTopicName : '';
  const names =
    partitions === 0
      ? [parsed.toString()]
      : Array.from({ length: Math.min(partitions, MAX_SUMMARY_PARTITIONS) }, (_, i) => parsed.partition(i).toString());
  const indexOf = (index: number) => (partitions > 0 ? index : ofPartitioned === '' ? -1 : parsed.partitionIndex);
  const [summaries, readonly] = await Promise.all([
    pMap(names, (topic, index) => partitionSummary(context, caller, topic, indexOf(index)), {
      concurrency: FAN_OUT_CONCURRENCY,
    }),
    readonlyOwners(context, caller, names[0]!),
  ]);
  return {
    topic: parsed.toString(),
    partitions,
    createdAtMs: info.topic?.createdAtMs ?? 0n,
    partitionSummaries: summaries,
    readonlyOwners: readonly,
    partitionedTopic: ofPartitioned,
  };
}
