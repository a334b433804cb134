import type { MessageInitShape } from '@bufbuild/protobuf';
import { LedgerlineError } from '@ledgerline/errors';
import type {
  GetSubscriptionSummaryRequest,
  GetSubscriptionSummaryResponseSchema,
  ListAckRangesRequest,
  ListAckRangesResponseSchema,
  SubscriptionStats,
} from '@ledgerline/proto';
import { consolePage, pageStart } from './ack-ranges.js';
import type { OwnerClients } from './backends.js';
import { boundedCount } from './bounded-input.js';
import { checkInternalAccess } from './internal-access.js';
import type { Caller } from './caller.js';
import type { ConsoleContext } from './console-context.js';
import { ConsoleReason } from './console-reason.js';
import { DEFAULT_ACK_MAP_CELLS, DEFAULT_ACK_RANGE_PAGE, MAX_ACK_MAP_CELLS, MAX_ACK_RANGE_PAGE } from './limits.js';
import { singleLogTopic } from './single-topic.js';
import { subscriptionRow } from './topic-summary.js';

function missingSubscription(topic: string, subscription: string): LedgerlineError {
  return new LedgerlineError(
    'NOT_FOUND',
    ConsoleReason.CONSOLE_SUBSCRIPTION_NOT_FOUND,
    `${topic} has no subscription ${JSON.stringify(subscription)}`,
    { details: { topic, subscription } },
  );
}

/**
 * Runs `read` at the topic's writer owner, where the cursor is. Reading a
 * cursor is an internal API of the owners: with token authentication on,
 * only a super-user's token reads it. The owner summarises the cursor and
 * pages its ranges itself, so a cursor of a million holes costs the console
 * one map and one page, never the whole range list.
 */
async function atCursor<T>(
  context: ConsoleContext,
  caller: Caller,
  name: string,
  read: (owner: OwnerClients, topic: string) => Promise<T>,
): Promise<T> {
  await checkInternalAccess(context, caller, '/ledgerline.v1.CursorsService/GetCursorSummary');
  const topic = await singleLogTopic(context, caller, name);
  return context.backends.atOwner(topic, caller, (owner) => read(owner, topic));
}

/** The subscription page: its row, its cursor, the ack-hole map and the first page of exact ranges. */
export async function subscriptionSummary(
  context: ConsoleContext,
  caller: Caller,
  request: GetSubscriptionSummaryRequest,
): Promise<MessageInitShape<typeof GetSubscriptionSummaryResponseSchema>> {
  const cells = boundedCount(request.cells, DEFAULT_ACK_MAP_CELLS, MAX_ACK_MAP_CELLS, 'cells');
  const pageSize = boundedCount(request.rangesPageSize, DEFAULT_ACK_RANGE_PAGE, MAX_ACK_RANGE_PAGE, 'ranges_page_size');
  const { subscription } = request;
  return atCursor(context, caller, request.topic, async (owner, topic) => {
    const options = caller.callOptions();
    const stats = await owner.topics.getTopicStats({ topic }, options);
    const row: SubscriptionStats | undefined = stats.subscriptions.find((stat) => stat.name === subscription);
    if (row === undefined) throw missingSubscription(topic, subscription);
    const [summary, page] = await Promise.all([
      owner.cursors.getCursorSummary({ topic, subscription, cells }, options),
      owner.cursors.listAckedRanges({ topic, subscription, limit: pageSize }, options),
    ]);
    const cursor = summary.cursor!;
    const first = consolePage(page);
    return {
      topic,
      subscription: subscriptionRow(row),
      ...(cursor.markDelete === undefined ? {} : { markDelete: cursor.markDelete }),
      ...(summary.ackMap?.spanLast === undefined ? {} : { lastEntry: summary.ackMap.spanLast }),
      resetEpoch: cursor.resetEpoch,
      properties: cursor.properties,
      cursorProperties: cursor.cursorProperties,
      partiallyAckedBatches: summary.partiallyAckedBatches,
      ...(summary.ackMap === undefined ? {} : { ackMap: summary.ackMap }),
      ranges: first.ranges,
      rangesNextPageToken: first.nextPageToken,
      cursorStateBytes: row.cursorStateBytes,
      consumers: row.consumers,
    };
  });
}

/** A page of exact acknowledged ranges, from a position (a cell of the map) or a page token. */
export async function listAckRanges(
  context: ConsoleContext,
  caller: Caller,
  request: ListAckRangesRequest,
): Promise<MessageInitShape<typeof ListAckRangesResponseSchema>> {
  const limit = boundedCount(request.pageSize, DEFAULT_ACK_RANGE_PAGE, MAX_ACK_RANGE_PAGE, 'page_size');
  const from = pageStart(request.pageToken, request.from);
  const { subscription } = request;
  const page = await atCursor(context, caller, request.topic, (owner, topic) =>
    owner.cursors.listAckedRanges(
      { topic, subscription, limit, ...(from === undefined ? {} : { from }) },
      caller.callOptions(),
    ),
  );
  return consolePage(page);
}
