import { create } from '@bufbuild/protobuf';
import { NestedPositionInfoSchema, type NestedPositionInfo } from '@ledgerline/proto';
import { type Position } from '@ledgerline/cursor-codec';
import { LedgerlineError } from '@ledgerline/errors';
import { LedgerInfoReason } from './reasons.js';

/** Converts a stored int64 to a number; a stored value beyond 2^53 is corrupt metadata, not a rounding. */
export function int64ToNumber(value: bigint, what: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new LedgerlineError(
      'DATA_LOSS',
      LedgerInfoReason.METADATA_VALUE_OUT_OF_RANGE,
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
