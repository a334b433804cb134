import { create } from '@bufbuild/protobuf';
import { LedgerlineError } from '@ledgerline/errors';
import { OwnerReason } from '@ledgerline/ownership';
import { CursorDataSchema } from '@ledgerline/proto';
import { acksOf, deltaMessage } from './cursor-data.js';

describe('cursor data exchanged with the writer owner', () => {
  it('reads a cursor the writer did not send as nothing acknowledged', () => {
    expect(acksOf(undefined)).toEqual({ markDelete: { ledgerId: 0, entryId: -1 }, ackedRanges: [], batchAcks: [] });
  });

  it('reads back the acknowledgements a delta sent', () => {
    const acks = {
      markDelete: { ledgerId: 3, entryId: 4 },
      ackedRanges: [{ ledgerId: 3, firstEntryId: 6, lastEntryId: 9 }],
      batchAcks: [{ position: { ledgerId: 3, entryId: 5 }, ackedIndexes: [0, 2], batchSize: 4 }],
    };
    const { markDelete, ackedRanges, batchAcks, resetEpoch } = deltaMessage({ ...acks, resetEpoch: 2 });
    expect(resetEpoch).toBe(2n);
    expect(acksOf(create(CursorDataSchema, { markDelete, ackedRanges, batchAcks }))).toEqual(acks);
  });

  it('refuses a mark-delete position out of range', () => {
    const cursor = create(CursorDataSchema, { markDelete: { ledgerId: -1n, entryId: 0n } });
    let thrown: unknown;
    try {
      acksOf(cursor);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(LedgerlineError);
    expect(thrown).toMatchObject({ code: 'INVALID_ARGUMENT', reason: OwnerReason.INVALID_POSITION });
  });
});
