import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { invalidArgument } from '@ledgerline/errors';
import { PositionSchema, type AckRangeSchema, type EntryRange, type Position } from '@ledgerline/proto';
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

/**
 * Where a page of ranges starts, as the owner's ListAckedRanges takes it: the
 * first range that ends at or after this position. A token is the position
 * the previous page ended at, so the next page starts one entry after it; a
 * position, not an index, so a page stays right while acks change between pages.
 */
export function pageStart(pageToken: string, from: Position | undefined): Position | undefined {
  if (pageToken === '') return from;
  const after = decodeRangeToken(pageToken);
  return create(PositionSchema, { ledgerId: after.ledgerId, entryId: after.entryId + 1n });
}

/** The owner's page as the console answers it, with the token of the page after it. */
export function consolePage(page: { ranges: readonly EntryRange[]; more: boolean }): {
  ranges: AckRange[];
  nextPageToken: string;
} {
  const last = page.ranges.at(-1);
  return {
    ranges: page.ranges.map((range) => ({
      first: { ledgerId: range.ledgerId, entryId: range.firstEntryId },
      last: { ledgerId: range.ledgerId, entryId: range.lastEntryId },
      entries: range.lastEntryId - range.firstEntryId + 1n,
    })),
    nextPageToken:
      page.more && last !== undefined ? encodeRangeToken({ ledgerId: last.ledgerId, entryId: last.lastEntryId }) : '',
  };
}
