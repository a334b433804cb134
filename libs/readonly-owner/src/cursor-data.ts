import type { ExportedAcks, AckDelta } from '@ledgerline/managed-ledger';
import type { CursorData, AckDeltaSchema } from '@ledgerline/proto';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { positionFromRequest, positionMessage, safeNumber } from '@ledgerline/ownership';

/** The acknowledgements of a CursorData the writer owner answered with. */
export function acksOf(cursor: CursorData | undefined): ExportedAcks {
  if (cursor === undefined) return { markDelete: { ledgerId: 0, entryId: -1 }, ackedRanges: [], batchAcks: [] };
  return {
    markDelete: positionFromRequest(cursor.markDelete, 'mark_delete'),
    ackedRanges: cursor.ackedRanges.map((r) => ({
      ledgerId: safeNumber(r.ledgerId, 'ledger_id'),
      firstEntryId: safeNumber(r.firstEntryId, 'first_entry_id'),
      lastEntryId: safeNumber(r.lastEntryId, 'last_entry_id'),
    })),
    batchAcks: cursor.batchAcks.map((b) => ({
      position: positionFromRequest(b.position, 'batch_acks.position'),
      ackedIndexes: [...b.ackedIndexes],
      batchSize: b.batchSize,
    })),
  };
}

export function deltaMessage(delta: AckDelta): MessageInitShape<typeof AckDeltaSchema> {
  return {
    ackedRanges: (delta.ackedRanges ?? []).map((r) => ({
      ledgerId: BigInt(r.ledgerId),
      firstEntryId: BigInt(r.firstEntryId),
      lastEntryId: BigInt(r.lastEntryId),
    })),
    ...(delta.markDelete === undefined ? {} : { markDelete: positionMessage(delta.markDelete) }),
    batchAcks: (delta.batchAcks ?? []).map((b) => ({
      position: positionMessage(b.position),
      ackedIndexes: b.ackedIndexes,
      batchSize: b.batchSize,
    })),
    resetEpoch: BigInt(delta.resetEpoch),
  };
}
