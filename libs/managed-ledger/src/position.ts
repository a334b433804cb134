import {
  checkPosition as checkCodecPosition,
  comparePositions,
  type CheckedPosition,
  type Position,
} from '@ledgerline/cursor-codec';

export function position(ledgerId: number, entryId: number): Position {
  return { ledgerId, entryId };
}

export function samePosition(a: Position, b: Position): boolean {
  return a.ledgerId === b.ledgerId && a.entryId === b.entryId;
}

export function maxPosition(a: Position, b: Position): Position {
  return comparePositions(a, b) >= 0 ? a : b;
}

export function minPosition(a: Position, b: Position): Position {
  return comparePositions(a, b) <= 0 ? a : b;
}

export function formatPosition(p: Position): string {
  return `${p.ledgerId}:${p.entryId}`;
}

/** A key for maps keyed by position. */
export function positionKey(p: Position): string {
  return `${p.ledgerId}:${p.entryId}`;
}

/**
 * Checks a position that came from outside (a delta, a seek, a start
 * position): cursor-codec's one rule, ledgerId >= 0 and entryId >= -1 as safe
 * integers, INVALID_POSITION otherwise. Kept under this name for this
 * package's callers.
 */
export const checkPosition: (p: unknown, what?: string) => CheckedPosition = checkCodecPosition;
