import type { LedgerView } from '../ledgers/ledger-views.js';
import { ReadOnlyCursorState } from './read-only-cursor-state.js';

// Two ledgers: 1 closed with 5 entries, 2 open with 5 confirmed.
const views: LedgerView[] = [
  { ledgerId: 1, entries: 5, firstOffset: 0, lastOffset: 4, sizeBytes: 0, open: false, closedAtMs: 1 },
  { ledgerId: 2, entries: 5, firstOffset: 5, lastOffset: -1, sizeBytes: 0, open: true },
];
const at = (ledgerId: number, entryId: number) => ({ ledgerId, entryId });

function fresh(maxDeltaRanges?: number): ReadOnlyCursorState {
  return new ReadOnlyCursorState(
    () => views,
    { markDelete: at(1, -1), ackedRanges: [], batchAcks: [] },
    0,
    maxDeltaRanges,
  );
}

describe('ReadOnlyCursorState', () => {
  it('applies acks at once and sends only what changed, once', () => {
    const state = fresh();
    state.ack([at(1, 0), at(1, 2), at(2, 1)]);
    expect(state.markDelete).toEqual(at(1, 0));
    expect(state.isAcknowledged(at(1, 2))).toBe(true);
    expect(state.isAcknowledged(at(1, 1))).toBe(false);
    const delta = state.takeDelta()!;
    expect(delta.ackedRanges).toEqual([
      { ledgerId: 1, firstEntryId: 2, lastEntryId: 2 },
      { ledgerId: 2, firstEntryId: 1, lastEntryId: 1 },
    ]);
    expect(delta.markDelete).toEqual(at(1, 0));
    expect(state.takeDelta()).toBeUndefined();
  });

  it('applies ranges whole and sends each to the writer as the one range it is', () => {
    const state = fresh();
    state.ack(
      [at(2, 4)],
      [
        { ledgerId: 1, firstEntryId: 2, lastEntryId: 4 },
        { ledgerId: 2, firstEntryId: 0, lastEntryId: 2 },
      ],
    );
    expect(state.isAcknowledged(at(1, 1))).toBe(false);
    expect(state.isAcknowledged(at(2, 2))).toBe(true);
    expect(state.takeDelta()!.ackedRanges).toEqual([
      { ledgerId: 1, firstEntryId: 2, lastEntryId: 4 },
      { ledgerId: 2, firstEntryId: 0, lastEntryId: 2 },
      { ledgerId: 2, firstEntryId: 4, lastEntryId: 4 },
    ]);
    // 1:0..1 fill the gap: mark-delete runs to 2:2, and the delta carries it rather than the ranges below it.
    state.ack([], [{ ledgerId: 1, firstEntryId: 0, lastEntryId: 1 }]);
    const delta = state.takeDelta()!;
    expect(delta.markDelete).toEqual(at(2, 2));
    expect(delta.ackedRanges).toEqual([]);
  });

  it('refuses a range past what the view has confirmed, changing nothing', () => {
    const state = fresh();
    expect(() => state.ack([at(1, 0)], [{ ledgerId: 2, firstEntryId: 3, lastEntryId: 5 }])).toThrow(
      expect.objectContaining({ reason: 'POSITION_OUT_OF_RANGE' }),
    );
    expect(state.isAcknowledged(at(1, 0))).toBe(false);
    expect(state.takeDelta()).toBeUndefined();
  });

  it('keeps a delta the writer did not take and sends it with the next one', () => {
    const state = fresh();
    state.ack([at(1, 3)]);
    const lost = state.takeDelta()!;
    state.ack([at(2, 4)]);
    state.unsent(lost);
    const next = state.takeDelta()!;
    expect(next.ackedRanges).toEqual([
      { ledgerId: 1, firstEntryId: 3, lastEntryId: 3 },
      { ledgerId: 2, firstEntryId: 4, lastEntryId: 4 },
    ]);
  });

  it('merges the writer state by union: acks made elsewhere are kept, local ones are not undone', () => {
    const state = fresh();
    state.ack([at(1, 3)]);
    state.merge({
      markDelete: at(1, 1),
      ackedRanges: [{ ledgerId: 2, firstEntryId: 0, lastEntryId: 2 }],
      batchAcks: [],
    });
    expect(state.markDelete).toEqual(at(1, 1));
    expect(state.isAcknowledged(at(1, 3))).toBe(true);
    expect(state.isAcknowledged(at(2, 2))).toBe(true);
    expect(state.isAcknowledged(at(1, 2))).toBe(false);
    state.ack([at(1, 2), at(1, 4)]);
    // 1:0..4 and 2:0..2 are all acknowledged: mark-delete runs up to 2:2.
    expect(state.markDelete).toEqual(at(2, 2));
  });

  it('sends batch-index acks and turns a completed batch into an entry ack', () => {
    const state = fresh();
    state.ackBatchIndexes(at(1, 1), [0, 2], 4);
    expect(state.ackedBatchIndexes(at(1, 1))).toEqual([0, 2]);
    expect(state.takeDelta()!.batchAcks).toEqual([{ position: at(1, 1), ackedIndexes: [0, 2], batchSize: 4 }]);
    state.ackBatchIndexes(at(1, 1), [1, 3], 4);
    expect(state.isAcknowledged(at(1, 1))).toBe(true);
    expect(state.takeDelta()!.ackedRanges).toEqual([{ ledgerId: 1, firstEntryId: 1, lastEntryId: 1 }]);
  });

  it('bounds a delta by maxDeltaRanges and sends the rest next', () => {
    const state = fresh(2);
    state.ack([at(1, 1), at(1, 3), at(2, 1), at(2, 3)]);
    expect(state.takeDelta()!.ackedRanges).toHaveLength(2);
    expect(state.takeDelta()!.ackedRanges).toEqual([
      { ledgerId: 2, firstEntryId: 1, lastEntryId: 1 },
      { ledgerId: 2, firstEntryId: 3, lastEntryId: 3 },
    ]);
    expect(state.takeDelta()).toBeUndefined();
  });

  it('a reset replaces the state and drops unsent acks of the old epoch', () => {
    const state = fresh();
    state.ack([at(2, 3)]);
    const old = state.takeDelta()!;
    state.reset({ markDelete: at(1, 2), ackedRanges: [], batchAcks: [] }, 1);
    state.unsent(old);
    expect(state.isAcknowledged(at(2, 3))).toBe(false);
    expect(state.resetEpoch).toBe(1);
    expect(state.takeDelta()).toBeUndefined();
    expect(state.backlogEntries()).toBe(7);
  });
});
