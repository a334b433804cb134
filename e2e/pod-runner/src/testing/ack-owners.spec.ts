import { acksFromSupersededOwners, type OwnedAck } from './ack-owners.js';

const ack = (ledgerId: number, sentAtMs: number, atMs: number, duplicate = false): OwnedAck => ({
  ledgerId: BigInt(ledgerId),
  duplicate,
  sentAtMs,
  atMs,
});

describe('acksFromSupersededOwners', () => {
  it('finds nothing when each owner stopped answering before the next began', () => {
    expect(acksFromSupersededOwners([ack(1, 0, 5), ack(1, 10, 15), ack(4, 20, 40), ack(4, 41, 45)])).toBe(0);
  });

  it('allows a late answer from the old owner for a send made before the new owner answered', () => {
    // Sent at 10 to the old owner, answered at 60, after the new owner's first answer at 40: stored before the fence.
    expect(acksFromSupersededOwners([ack(1, 10, 60), ack(4, 20, 40)])).toBe(0);
  });

  it('counts sends made after a newer ledger answered that the older one acknowledged', () => {
    expect(
      acksFromSupersededOwners([ack(1, 0, 5), ack(4, 20, 40), ack(1, 50, 55), ack(1, 60, 65), ack(4, 70, 75)]),
    ).toBe(2);
  });

  it('leaves out duplicates, which a new owner answers with the place in the old ledger', () => {
    expect(acksFromSupersededOwners([ack(4, 20, 40), ack(1, 50, 55, true)])).toBe(0);
  });

  it('compares with every newer ledger, not only the next', () => {
    expect(acksFromSupersededOwners([ack(1, 0, 5), ack(4, 30, 35), ack(2, 10, 100), ack(2, 50, 120)])).toBe(1);
  });
});
