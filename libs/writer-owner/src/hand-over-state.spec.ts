import { create } from '@bufbuild/protobuf';
import type { HandOverState } from '@ledgerline/managed-ledger';
import { HandedOverStateSchema, ManagedCursorInfoSchema, ManagedLedgerInfoSchema } from '@ledgerline/proto';
import { handOverStateFromProto, handOverStateToProto } from './hand-over-state.js';

const state: HandOverState = {
  info: { value: create(ManagedLedgerInfoSchema, {}), version: 7 },
  cursors: [{ name: 'sub', node: { value: create(ManagedCursorInfoSchema, { cursorsLedgerId: 3n }), version: 2 } }],
};

describe("a transfer's hand-over state on the wire", () => {
  it('comes out of LoadTopic as the source put it in', () => {
    expect(handOverStateFromProto(handOverStateToProto(state))).toEqual(state);
  });

  it('is absent without one, and dropped with a cursor that has no node', () => {
    expect(handOverStateFromProto(undefined)).toBeUndefined();
    const partial = create(HandedOverStateSchema, {
      info: create(ManagedLedgerInfoSchema, {}),
      version: 7n,
      cursors: [{ name: 'sub', version: 2n }],
    });
    expect(handOverStateFromProto(partial)).toBeUndefined();
  });

  it('turns a version no number holds into one the open refuses (-1)', () => {
    const huge = create(HandedOverStateSchema, { info: create(ManagedLedgerInfoSchema, {}), version: 1n << 60n });
    expect(handOverStateFromProto(huge)?.info.version).toBe(-1);
  });
});
