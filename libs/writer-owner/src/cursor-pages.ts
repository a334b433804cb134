import type { MessageInitShape } from '@bufbuild/protobuf';
import type { AckMapResult, MapPosition } from '@ledgerline/managed-ledger';
import { OwnerReason, positionFromRequest } from '@ledgerline/ownership';
import type {
  AckMapSchema,
  GetCursorSummaryRequest,
  GetCursorSummaryResponseSchema,
  ListAckedRangesRequest,
  ListAckedRangesResponseSchema,
} from '@ledgerline/proto';
import { boundedCount } from '@ledgerline/rpc';
import { cursorData, existing } from './cursor-data.js';
import type { CursorsOwner } from './owner-view.js';

type AckMap = MessageInitShape<typeof AckMapSchema>;

/** Cells of an ack map (GetCursorSummary): the answer stays far below the message bound (about 60 bytes a cell). */
export const MAX_ACK_MAP_CELLS = 4_096;
export const DEFAULT_ACK_MAP_CELLS = 512;
/** Ranges in one ListAckedRanges answer: about 20 bytes each, so a page stays near 200 KB. */
export const MAX_ACKED_RANGES_PAGE = 10_000;
export const DEFAULT_ACKED_RANGES_PAGE = 100;

const mapPosition = (p: MapPosition) => ({ ledgerId: BigInt(p.ledgerId), entryId: BigInt(p.entryId) });

function ackMapMessage(map: AckMapResult): AckMap {
  return {
    ...(map.spanFirst === undefined ? {} : { spanFirst: mapPosition(map.spanFirst) }),
    ...(map.spanLast === undefined ? {} : { spanLast: mapPosition(map.spanLast) }),
    spanEntries: BigInt(map.spanEntries),
    cells: map.cells.map((cell) => ({
      first: mapPosition(cell.first),
      last: mapPosition(cell.last),
      entries: BigInt(cell.entries),
      ackedEntries: BigInt(cell.ackedEntries),
      ranges: BigInt(cell.ranges),
      firstOffset: BigInt(cell.firstOffset),
      lastOffset: BigInt(cell.lastOffset),
    })),
    ackedRanges: BigInt(map.ackedRanges),
    ackedEntries: BigInt(map.ackedEntries),
    unplacedRanges: BigInt(map.unplacedRanges),
  };
}

/** The cursor a request names, on a topic this owner holds (NOT_OWNER, SUBSCRIPTION_NOT_FOUND otherwise). */
async function cursorOf(owner: CursorsOwner, request: { topic: string; subscription: string }) {
  return existing(await owner.topic(request.topic), request.subscription);
}

/**
 * GetCursorSummary: a cursor of any size without its ranges, with the ack map
 * of its span (PIP-381: a million holes do not fit one GetCursor answer).
 */
export async function cursorSummary(
  owner: CursorsOwner,
  request: GetCursorSummaryRequest,
): Promise<MessageInitShape<typeof GetCursorSummaryResponseSchema>> {
  const cursor = await cursorOf(owner, request);
  const cells = boundedCount(
    request.cells,
    DEFAULT_ACK_MAP_CELLS,
    MAX_ACK_MAP_CELLS,
    'cells',
    OwnerReason.INVALID_REQUEST,
  );
  const summary = cursor.summary(cells);
  return {
    cursor: cursorData({ ...summary, ackedRanges: [], batchAcks: [] }),
    ackMap: ackMapMessage(summary.ackMap),
    partiallyAckedBatches: summary.partiallyAckedBatches,
  };
}

/** ListAckedRanges: a page of a cursor's acknowledged ranges, from a position. */
export async function ackedRanges(
  owner: CursorsOwner,
  request: ListAckedRangesRequest,
): Promise<MessageInitShape<typeof ListAckedRangesResponseSchema>> {
  const cursor = await cursorOf(owner, request);
  const limit = boundedCount(
    request.limit,
    DEFAULT_ACKED_RANGES_PAGE,
    MAX_ACKED_RANGES_PAGE,
    'limit',
    OwnerReason.INVALID_REQUEST,
  );
  const from = request.from === undefined ? undefined : positionFromRequest(request.from, 'from');
  const page = cursor.ackedRanges(from, limit);
  return {
    ranges: page.ranges.map((r) => ({
      ledgerId: BigInt(r.ledgerId),
      firstEntryId: BigInt(r.firstEntryId),
      lastEntryId: BigInt(r.lastEntryId),
    })),
    more: page.more,
  };
}
