import { checkEntryPosition, checkEntryRange, type CheckedEntryRange, type EntryPosition } from './checked-position.js';
import { checkWithinLimit } from './data-path-limits.js';
import { invalidPosition } from './errors.js';

/** The whole entries one ack acknowledges individually, checked: single positions and ranges. */
export interface CheckedEntryAcks {
  readonly positions: EntryPosition[];
  readonly ranges: CheckedEntryRange[];
}

/**
 * Checks the whole entries of one ack (an Ack's positions and ranges), all
 * before any is used. They count against maxAckPositionsPerCall by the
 * entries they name, a position one and a range its length: a range costs
 * four varints on the wire whatever its length, but what a consumer
 * acknowledges costs the owner per entry still delivered (pending acks,
 * replay, delivery counts), so the bound is on entries. The items are counted
 * first, each at least one entry, so a flood of ranges is refused before any
 * is looked at. LIMIT_EXCEEDED past the bound, INVALID_POSITION for a
 * position or range that names no entry or runs backwards.
 */
export function checkEntryAcks(positions: unknown, ranges: unknown, what: string): CheckedEntryAcks {
  if (!Array.isArray(positions)) throw invalidPosition(`${what} takes an array of positions`);
  if (!Array.isArray(ranges)) throw invalidPosition(`${what} takes an array of ranges`);
  if (ranges.length === 0) {
    checkWithinLimit('maxAckPositionsPerCall', positions.length, `${what} positions`);
    return { positions: positions.map((p) => checkEntryPosition(p, `${what} position`)), ranges: [] };
  }
  checkWithinLimit('maxAckPositionsPerCall', positions.length + ranges.length, `${what} positions and ranges`);
  const checkedRanges = ranges.map((r) => checkEntryRange(r, `${what} range`));
  let entries = positions.length;
  for (const r of checkedRanges) entries += r.lastEntryId - r.firstEntryId + 1;
  checkWithinLimit('maxAckPositionsPerCall', entries, `${what} (a position counts one entry, a range its length)`);
  return { positions: positions.map((p) => checkEntryPosition(p, `${what} position`)), ranges: checkedRanges };
}
