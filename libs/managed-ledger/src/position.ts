import { create } from '@bufbuild/protobuf';
import { NestedPositionInfoSchema, type NestedPositionInfo } from '@ledgerline/proto';
import { comparePositions, type Position } from '@ledgerline/cursor-codec';
import { invalidArgument, LedgerlineError } from '@ledgerline/errors';
import { CursorCodecReason } from '@ledgerline/cursor-codec';
import { ManagedLedgerReason } from './reasons.js';

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

/** Converts a stored int64 to a number; a stored value beyond 2^53 is corrupt metadata, not a rounding. */
export function int64ToNumber(value: bigint, what: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new LedgerlineError(
      'DATA_LOSS',
      ManagedLedgerReason.METADATA_VALUE_OUT_OF_RANGE,
      `${what} ${value} is not a safe integer`,
    );
  }
  return Number(value);
}

export function positionFromProto(p: NestedPositionInfo | undefined, what: string): Position | undefined {
  if (p === undefined) return undefined;
  return {
    ledgerId: int64ToNumber(p.ledgerId, `${what}.ledgerId`),
    entryId: int64ToNumber(p.entryId, `${what}.entryId`),
  };
}

export function positionToProto(p: Position): NestedPositionInfo {
  return create(NestedPositionInfoSchema, { ledgerId: BigInt(p.ledgerId), entryId: BigInt(p.entryId) });
}
