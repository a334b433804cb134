import { comparePositions, type Position } from '@ledgerline/cursor-codec';
import { invalidArgument } from '@ledgerline/errors';
import { CursorCodecReason } from '@ledgerline/cursor-codec';

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
 * Checks a position that came from outside (a client, a delta): ids must be
 * safe integers, the ledger id non-negative and the entry id at least -1.
 */
export function checkPosition(p: unknown, what = 'position'): Position {
  const candidate = p as Partial<Position> | undefined;
  if (
    candidate === undefined ||
    candidate === null ||
    typeof candidate !== 'object' ||
    !Number.isSafeInteger(candidate.ledgerId) ||
    !Number.isSafeInteger(candidate.entryId) ||
    (candidate.ledgerId as number) < 0 ||
    (candidate.entryId as number) < -1
  ) {
    throw invalidArgument(
      CursorCodecReason.INVALID_POSITION,
      `${what} must be {ledgerId >= 0, entryId >= -1} with safe integers`,
    );
  }
  return { ledgerId: candidate.ledgerId as number, entryId: candidate.entryId as number };
}
