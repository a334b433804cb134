import type { MessageInitShape } from '@bufbuild/protobuf';
import { invalidArgument } from '@ledgerline/errors';
import type { AckRangeSchema, EntryRange, Position } from '@ledgerline/proto';
import { ConsoleReason } from './console-reason.js';

type AckRange = MessageInitShape<typeof AckRangeSchema>;

/** Where a page of ranges starts: after the range ending at this position. */
interface RangeCursor {
  ledgerId: bigint;
  entryId: bigint;
}

const TOKEN = /^r1\.(\d{1,19})\.(-?\d{1,19})$/;

export function encodeRangeToken(after: RangeCursor): string {
  return `r1.${after.ledgerId}.${after.entryId}`;
}

function decodeRangeToken(token: string): RangeCursor {
  const match = TOKEN.exec(token);
  if (match === null) {
    throw invalidArgument(
      ConsoleReason.CONSOLE_BAD_PAGE_TOKEN,
      'the ack-range page token is not one the console handed out',
    );
  }
  return { ledgerId: BigInt(match[1]!), entryId: BigInt(match[2]!) };
}

function endsAfter(range: EntryRange, at: RangeCursor): boolean {
  return range.ledgerId > at.ledgerId || (range.ledgerId === at.ledgerId && range.lastEntryId > at.entryId);
}

/**
 * A page of the cursor's acknowledged ranges, in position order: those that
 * end after the page token's position, or, for a first page, at or after
 * `from`. The token is a position, not an index, so a page stays right while
 * acks change the list between pages. Ranges arrive sorted (the cursor keeps
 * them so); the first one wanted is found by binary search.
 */
export function pageOfRanges(
  ranges: readonly EntryRange[],
  pageSize: number,
  pageToken: string,
  from: Position | undefined,
): { ranges: AckRange[]; nextPageToken: string } {
  const after: RangeCursor =
    pageToken !== ''
      ? decodeRangeToken(pageToken)
      : { ledgerId: from?.ledgerId ?? -1n, entryId: (from?.entryId ?? 0n) - 1n };
  let low = 0;
  let high = ranges.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (endsAfter(ranges[middle]!, after)) high = middle;
    else low = middle + 1;
  }
  const page = ranges.slice(low, low + pageSize);
  const last = page.at(-1);
  const more = low + pageSize < ranges.length && last !== undefined;
  return {
    ranges: page.map((range) => ({
      first: { ledgerId: range.ledgerId, entryId: range.firstEntryId },
      last: { ledgerId: range.ledgerId, entryId: range.lastEntryId },
      entries: range.lastEntryId - range.firstEntryId + 1n,
    })),
    nextPageToken: more ? encodeRangeToken({ ledgerId: last.ledgerId, entryId: last.lastEntryId }) : '',
  };
}
