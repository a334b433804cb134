import { comparePositions } from '@ledgerline/cursor-codec';
import { LedgerlineError } from '@ledgerline/errors';
import { storedLowWatermark } from '@ledgerline/ledger-info';
import type { LedgerContext } from '../context.js';
import type { ManagedCursor } from '../cursors/managed-cursor.js';
import { ManagedLedgerReason } from '../reasons.js';
import type { LedgerTrimmer } from './ledger-trimmer.js';
import { findByOffset } from './position-lookup.js';

/**
 * Deletes the messages before `offset` (Kafka's DeleteRecords): from then on
 * a lookup below it answers it as the earliest (position-lookup.ts: a fetch
 * there is OFFSET_TRIMMED), every cursor whose mark-delete is before the
 * entry holding it is acknowledged up to that entry, so no subscription
 * reads the deleted ones, and the ledgers wholly below it are removed and
 * recorded deletable in the one update of the ManagedLedgerInfo that stores
 * the new low watermark (LedgerTrimmer.trimBefore). An entry holding
 * messages on both sides of `offset` stays whole, as a Kafka batch does.
 * `offset` is at most the next offset (OUT_OF_RANGE / OFFSET_OUT_OF_RANGE
 * past it), and the watermark never goes back. Resolves with the watermark.
 */
export async function deleteRecordsBefore(
  ctx: LedgerContext,
  cursors: readonly ManagedCursor[],
  trimmer: LedgerTrimmer,
  offset: number,
): Promise<number> {
  const end = ctx.assigner.committedEnd + 1;
  if (!Number.isSafeInteger(offset) || offset < 0 || offset > end) {
    throw new LedgerlineError(
      'OUT_OF_RANGE',
      ManagedLedgerReason.OFFSET_OUT_OF_RANGE,
      `records can be deleted before an offset from 0 to the next offset, ${end}; not before ${offset}`,
      { details: { offset: String(offset), next_offset: String(end) } },
    );
  }
  const lowWatermark = storedLowWatermark(ctx.keeper.info);
  if (offset <= lowWatermark) return lowWatermark;
  const holding = await findByOffset(ctx, offset);
  const before = { ledgerId: holding.ledgerId, entryId: holding.entryId - 1 };
  for (const cursor of cursors) {
    if (comparePositions(cursor.markDeletePosition, before) < 0) cursor.ackCumulative(before);
  }
  return trimmer.trimBefore(offset);
}
