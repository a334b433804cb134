import type { AppendResult } from '@ledgerline/managed-ledger';
import type { StoredReceipt } from './deduplication.js';
import type { Receipt } from './owned-topic.js';

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
