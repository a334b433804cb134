import type { MessageInitShape } from '@bufbuild/protobuf';
import { LedgerlineError } from '@ledgerline/errors';
import type {
  CursorData,
  EntryRange,
  GetSubscriptionSummaryRequest,
  GetSubscriptionSummaryResponseSchema,
  GetTopicStatsResponse,
  ListAckRangesRequest,
  ListAckRangesResponseSchema,
} from '@ledgerline/proto';
import { buildAckMap, type MapPosition } from './ack-map.js';
import { pageOfRanges } from './ack-ranges.js';
import { boundedCount } from './bounded-input.js';
import { checkInternalAccess } from './internal-access.js';
import type { Caller } from './caller.js';
import type { ConsoleContext } from './console-context.js';
import { ConsoleReason } from './console-reason.js';
import { DEFAULT_ACK_MAP_CELLS, DEFAULT_ACK_RANGE_PAGE, MAX_ACK_MAP_CELLS, MAX_ACK_RANGE_PAGE } from './limits.js';
import { singleLogTopic } from './single-topic.js';
import { subscriptionRow } from './topic-summary.js';

interface SubscriptionState {
  topic: string;
  stats: GetTopicStatsResponse;
  cursor: CursorData;
  ranges: EntryRange[];
}

function compareRanges(a: EntryRange, b: EntryRange): number {
  if (a.ledgerId !== b.ledgerId) return a.ledgerId < b.ledgerId ? -1 : 1;
  return a.firstEntryId < b.firstEntryId ? -1 : a.firstEntryId > b.firstEntryId ? 1 : 0;
}

/** The cursor's ranges in position order (the owner keeps them so; a copy is sorted only if not). */
function sortedRanges(ranges: EntryRange[]): EntryRange[] {
  for (let index = 1; index < ranges.length; index++) {
    if (compareRanges(ranges[index - 1]!, ranges[index]!) > 0) return [...ranges].sort(compareRanges);
  }
  return ranges;
}

/**
 * A subscription's stats and its cursor, both from the topic's writer owner.
 * Reading a cursor is an internal API of the owners: with token
 * authentication on, only a super-user's token reads it.
 */
async function readSubscription(
  context: ConsoleContext,
  caller: Caller,
  name: string,
  subscription: string,
): Promise<SubscriptionState> {
  await checkInternalAccess(context, caller, '/ledgerline.v1.CursorsService/GetCursor');
  const topic = await singleLogTopic(context, caller, name);
  return context.backends.atOwner(topic, caller, async (owner) => {
    const stats = await owner.topics.getTopicStats({ topic }, caller.callOptions());
    if (!stats.subscriptions.some((row) => row.name === subscription)) {
      throw new LedgerlineError(
        'NOT_FOUND',
        ConsoleReason.CONSOLE_SUBSCRIPTION_NOT_FOUND,
        `${topic} has no subscription ${JSON.stringify(subscription)}`,
        { details: { topic, subscription } },
      );
    }
    const answer = await owner.cursors.getCursor({ topic, subscription }, caller.callOptions());
    const cursor = answer.cursor!;
    return { topic, stats, cursor, ranges: sortedRanges(cursor.ackedRanges) };
  });
}

const position = (p: { ledgerId: bigint; entryId: bigint } | undefined): MapPosition => ({
  ledgerId: Number(p?.ledgerId ?? -1n),
  entryId: Number(p?.entryId ?? -1n),
});

const protoPosition = (p: MapPosition | undefined) =>
  p === undefined ? undefined : { ledgerId: BigInt(p.ledgerId), entryId: BigInt(p.entryId) };

function ackMap(state: SubscriptionState, cells: number) {
  const ledgers = state.stats.ledgerStats.map((ledger) => ({
    ledgerId: Number(ledger.ledgerId),
    entries: Number(ledger.entries),
    firstOffset: Number(ledger.firstOffset),
    lastOffset: Number(ledger.lastOffset),
  }));
  const ranges = state.ranges.map((range) => ({
    ledgerId: Number(range.ledgerId),
    firstEntryId: Number(range.firstEntryId),
    lastEntryId: Number(range.lastEntryId),
  }));
  const map = buildAckMap(ledgers, position(state.cursor.markDelete), ranges, cells);
  return {
    ...(map.spanFirst === undefined ? {} : { spanFirst: protoPosition(map.spanFirst) }),
    ...(map.spanLast === undefined ? {} : { spanLast: protoPosition(map.spanLast) }),
    spanEntries: BigInt(map.spanEntries),
    cells: map.cells.map((cell) => ({
      first: protoPosition(cell.first),
      last: protoPosition(cell.last),
      entries: BigInt(cell.entries),
      ackedEntries: BigInt(cell.ackedEntries),
      ranges: BigInt(cell.ranges),
      firstOffset: BigInt(cell.firstOffset),
      lastOffset: BigInt(cell.lastOffset),
    })),
    ackedRanges: BigInt(map.ackedRanges),
    ackedEntries: BigInt(map.ackedEntries),
    unplacedRanges: BigInt(map.unplacedRanges),
    spanLastPosition: map.spanLast,
  };
}

/** The subscription page: its row, its cursor, the ack-hole map and the first page of exact ranges. */
export async function subscriptionSummary(
  context: ConsoleContext,
  caller: Caller,
  request: GetSubscriptionSummaryRequest,
): Promise<MessageInitShape<typeof GetSubscriptionSummaryResponseSchema>> {
  const cells = boundedCount(request.cells, DEFAULT_ACK_MAP_CELLS, MAX_ACK_MAP_CELLS, 'cells');
  const pageSize = boundedCount(request.rangesPageSize, DEFAULT_ACK_RANGE_PAGE, MAX_ACK_RANGE_PAGE, 'ranges_page_size');
  const state = await readSubscription(context, caller, request.topic, request.subscription);
  const stats = state.stats.subscriptions.find((row) => row.name === request.subscription)!;
  const { spanLastPosition, ...map } = ackMap(state, cells);
  const lastEntry = protoPosition(spanLastPosition);
  const page = pageOfRanges(state.ranges, pageSize, '', undefined);
  return {
    topic: state.topic,
    subscription: subscriptionRow(stats),
    ...(state.cursor.markDelete === undefined ? {} : { markDelete: state.cursor.markDelete }),
    ...(lastEntry === undefined ? {} : { lastEntry }),
    resetEpoch: state.cursor.resetEpoch,
    properties: state.cursor.properties,
    cursorProperties: state.cursor.cursorProperties,
    partiallyAckedBatches: state.cursor.batchAcks.length,
    ackMap: map,
    ranges: page.ranges,
    rangesNextPageToken: page.nextPageToken,
    cursorStateBytes: stats.cursorStateBytes,
    consumers: stats.consumers,
  };
}

/** A page of exact acknowledged ranges, from a position (a cell of the map) or a page token. */
export async function listAckRanges(
  context: ConsoleContext,
  caller: Caller,
  request: ListAckRangesRequest,
): Promise<MessageInitShape<typeof ListAckRangesResponseSchema>> {
  const pageSize = boundedCount(request.pageSize, DEFAULT_ACK_RANGE_PAGE, MAX_ACK_RANGE_PAGE, 'page_size');
  const state = await readSubscription(context, caller, request.topic, request.subscription);
  return pageOfRanges(state.ranges, pageSize, request.pageToken, request.from);
}
