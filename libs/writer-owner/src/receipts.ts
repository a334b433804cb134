import type { AppendResult } from '@ledgerline/managed-ledger';
import type { Position } from '@ledgerline/cursor-codec';

/** What deduplication keeps of a stored entry: its place, when it was stored, and its first sequence id. */
export interface StoredReceipt {
  position: Position;
  firstOffset: number;
  lastOffset: number;
  publishTimeMs: number;
  sequenceId: bigint;
}

/** What a publish resolves with: the entry's place, or the original's for a duplicate. */
export interface Receipt {
  sequenceId: bigint;
  position: Position | undefined;
  firstOffset: number;
  lastOffset: number;
  duplicate: boolean;
  publishTimeMs: number;
}

// Both run once per entry: object literals of one shape each, not spreads, which copy by a slower path.

/** What deduplication keeps of a stored entry: its place, when it was stored, and its first sequence id. */
export function storedReceipt(result: AppendResult, publishTimeMs: number, sequenceId: bigint): StoredReceipt {
  return {
    position: result.position,
    firstOffset: result.firstOffset,
    lastOffset: result.lastOffset,
    publishTimeMs,
    sequenceId,
  };
}

/** The receipt a producer gets for `sequenceId`: the stored entry's place, or none known (-1) for an old duplicate. */
export function receiptOf(stored: StoredReceipt | undefined, sequenceId: bigint, duplicate: boolean): Receipt {
  return {
    sequenceId,
    position: stored?.position,
    firstOffset: stored?.firstOffset ?? -1,
    lastOffset: stored?.lastOffset ?? -1,
    duplicate,
    publishTimeMs: stored?.publishTimeMs ?? 0,
  };
}

/** The receipt a producer gets for its entry stored as `result`: made at once, with no StoredReceipt between. */
export function storedReceiptOf(result: AppendResult, publishTimeMs: number, sequenceId: bigint): Receipt {
  return {
    sequenceId,
    position: result.position,
    firstOffset: result.firstOffset,
    lastOffset: result.lastOffset,
    duplicate: false,
    publishTimeMs,
  };
}
