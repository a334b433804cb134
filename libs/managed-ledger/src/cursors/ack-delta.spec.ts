import fc from 'fast-check';
import { applyAckDelta, exportAcks, type AckDelta } from './ack-delta.js';
import { emptyAckState, type AckState } from './cursor-acks.js';
import type { LedgerView } from '../ledgers/ledger-views.js';

/** A topic with a closed ledger, an empty closed one, another closed one, and the open ledger. */
const views: LedgerView[] = [
  { ledgerId: 3, entries: 5, firstOffset: 0, lastOffset: 4, sizeBytes: 50, open: false, closedAtMs: 1 },
  { ledgerId: 4, entries: 0, firstOffset: 5, lastOffset: 4, sizeBytes: 0, open: false, closedAtMs: 2 },
  { ledgerId: 7, entries: 6, firstOffset: 5, lastOffset: 10, sizeBytes: 60, open: false, closedAtMs: 3 },
  { ledgerId: 9, entries: 4, firstOffset: 11, lastOffset: 14, sizeBytes: 40, open: true },
];
const BATCH_SIZE = 3;
const filled = views.filter((v) => v.entries > 0);

const entryArbitrary = fc
  .constantFrom(...filled)
  .chain((view) => fc.nat(view.entries - 1).map((entryId) => ({ ledgerId: view.ledgerId, entryId })));

const rangeArbitrary = fc
  .constantFrom(...filled)
  .chain((view) =>
    fc
      .tuple(fc.nat(view.entries - 1), fc.nat(view.entries - 1))
      .map(([a, b]) => ({ ledgerId: view.ledgerId, firstEntryId: Math.min(a, b), lastEntryId: Math.max(a, b) })),
  );

/** Mark-delete proposals, including "before a ledger" spellings (L, -1) of every ledger. */
const markDeleteArbitrary = fc.oneof(
  entryArbitrary,
  fc.constantFrom(...views).map((v) => ({ ledgerId: v.ledgerId, entryId: -1 })),
);

const deltaArbitrary: fc.Arbitrary<AckDelta> = fc.record(
  {
    ackedRanges: fc.array(rangeArbitrary, { maxLength: 4 }),
    markDelete: markDeleteArbitrary,
    batchAcks: fc.array(
      fc.record({
        position: entryArbitrary,
        ackedIndexes: fc
          .uniqueArray(fc.nat(BATCH_SIZE - 1), { minLength: 1, maxLength: BATCH_SIZE })
          .map((a) => a.sort()),
        batchSize: fc.constant(BATCH_SIZE),
      }),
      { maxLength: 3 },
    ),
    resetEpoch: fc.constant(0),
  },
  { requiredKeys: ['resetEpoch'] },
);

function apply(state: AckState, ...deltas: AckDelta[]): AckState {
  for (const delta of deltas) applyAckDelta(state, views, delta, 1_000);
  return state;
}

function fresh(): AckState {
  return emptyAckState({ ledgerId: 3, entryId: -1 });
}

function exported(state: AckState) {
  return exportAcks(state, views);
}

describe('ack deltas', () => {
  it('merge commutatively', () => {
    fc.assert(
      fc.property(deltaArbitrary, deltaArbitrary, deltaArbitrary, (base, d1, d2) => {
        const a = apply(apply(fresh(), base), d1, d2);
        const b = apply(apply(fresh(), base), d2, d1);
        expect(exported(a)).toEqual(exported(b));
      }),
      { numRuns: 300 },
    );
  });

  it('merge idempotently', () => {
    fc.assert(
      fc.property(deltaArbitrary, deltaArbitrary, (base, d) => {
        const once = apply(apply(fresh(), base), d);
        const twice = apply(apply(fresh(), base), d, d);
        expect(exported(twice)).toEqual(exported(once));
      }),
      { numRuns: 300 },
    );
  });

  it('keep the state normalized: mark-delete as far forward as the acks allow, nothing at or below it', () => {
    fc.assert(
      fc.property(fc.array(deltaArbitrary, { maxLength: 4 }), (deltas) => {
        const state = apply(fresh(), ...deltas);
        const { markDelete, ackedRanges, batchAcks } = exported(state);
        for (const range of ackedRanges) {
          expect(range.ledgerId > markDelete.ledgerId || range.firstEntryId > markDelete.entryId + 1).toBe(true);
        }
        for (const batch of batchAcks) {
          expect(batch.ackedIndexes.length).toBeLessThan(batch.batchSize);
          expect(state.acked.has(batch.position.ledgerId, batch.position.entryId)).toBe(false);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('spell the same consumption the same way: the end of a ledger equals the start of the next', () => {
    const atEnd = apply(fresh(), { resetEpoch: 0, markDelete: { ledgerId: 3, entryId: 4 } });
    const atNext = apply(fresh(), { resetEpoch: 0, markDelete: { ledgerId: 7, entryId: -1 } });
    const viaEmpty = apply(fresh(), { resetEpoch: 0, markDelete: { ledgerId: 4, entryId: -1 } });
    expect(exported(atEnd)).toEqual(exported(atNext));
    expect(exported(viaEmpty)).toEqual(exported(atNext));
    expect(exported(atNext).markDelete).toEqual({ ledgerId: 7, entryId: -1 });
  });

  it('refuses malformed deltas with INVALID_ARGUMENT', () => {
    expect(() =>
      apply(fresh(), { resetEpoch: 0, ackedRanges: [{ ledgerId: 3, firstEntryId: 2, lastEntryId: 1 }] }),
    ).toThrow(expect.objectContaining({ reason: 'INVALID_ACK_DELTA' }));
    expect(() =>
      apply(fresh(), { resetEpoch: 0, ackedRanges: [{ ledgerId: 3, firstEntryId: 0, lastEntryId: 99 }] }),
    ).toThrow(expect.objectContaining({ reason: 'POSITION_OUT_OF_RANGE' }));
    expect(() => apply(fresh(), { resetEpoch: 0, markDelete: { ledgerId: 3.5, entryId: 0 } })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
    const tooMany = Array.from({ length: 1_001 }, () => ({ ledgerId: 3, firstEntryId: 0, lastEntryId: 0 }));
    expect(() => apply(fresh(), { resetEpoch: 0, ackedRanges: tooMany })).toThrow(
      expect.objectContaining({ reason: 'INVALID_ACK_DELTA' }),
    );
  });
});
