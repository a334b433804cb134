import { clone, create } from '@bufbuild/protobuf';
import { DeletableLedgerSchema, LedgerInfoSchema, ManagedLedgerInfoSchema } from '@ledgerline/proto';
import { isCollectorChange, ownerEpoch, OWNER_EPOCH_PROPERTY } from './collector-changes.js';

function nodeWithMarkers(...ids: bigint[]) {
  return create(ManagedLedgerInfoSchema, {
    ledgerInfo: [create(LedgerInfoSchema, { ledgerId: 9n })],
    deletableLedgers: ids.map((ledgerId) => create(DeletableLedgerSchema, { ledgerId })),
  });
}

describe('the change only the collector makes', () => {
  it('is the same value with some markers removed', () => {
    const mine = nodeWithMarkers(1n, 2n, 3n);
    expect(isCollectorChange(mine, nodeWithMarkers(2n))).toBe(true);
    expect(isCollectorChange(mine, nodeWithMarkers())).toBe(true);
  });

  it('is nothing else: no marker added, nothing else changed', () => {
    const mine = nodeWithMarkers(1n, 2n);
    expect(isCollectorChange(mine, clone(ManagedLedgerInfoSchema, mine))).toBe(false);
    expect(isCollectorChange(mine, nodeWithMarkers(4n))).toBe(false);
    const other = nodeWithMarkers(1n);
    other.ledgerInfo = [];
    expect(isCollectorChange(mine, other)).toBe(false);
  });

  it('reads an owner epoch, 0 when absent or unreadable', () => {
    expect(ownerEpoch(new Map([[OWNER_EPOCH_PROPERTY, '4']]))).toBe(4);
    expect(ownerEpoch(new Map())).toBe(0);
    expect(ownerEpoch(new Map([[OWNER_EPOCH_PROPERTY, '-1']]))).toBe(0);
  });
});
