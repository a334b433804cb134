import { LedgerlineError } from '@ledgerline/errors';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';
import { refusal } from '@ledgerline/testing';
import { acquireLease, takeUpLease, type LeaseContext } from './lease.js';
import { OwnerReason } from './reasons.js';

type Placement = { instanceId: string; advertisedAddress: string };

/** A lookup that records what it was asked; `held` makes acquireLease answer LEASE_HELD by that instance. */
function context(placement: Placement, held?: Placement): LeaseContext & { calls: string[] } {
  const calls: string[] = [];
  const lookup = {
    lookupTopic: async () => {
      calls.push('lookupTopic');
      return placement;
    },
    acquireLease: async () => {
      calls.push('acquireLease');
      if (held === undefined) return {};
      throw new LedgerlineError('FAILED_PRECONDITION', MetadataServiceReason.LEASE_HELD, 'held', {
        details: { instanceId: held.instanceId, advertisedAddress: held.advertisedAddress },
      });
    },
  };
  return { calls, lookup: lookup as never, session: { sessionId: 's1' }, identity: { instanceId: 'me' } as never };
}

const here: Placement = { instanceId: 'me', advertisedAddress: 'me:6650' };
const other: Placement = { instanceId: 'other', advertisedAddress: 'other:6650' };

describe('acquireLease', () => {
  it('asks where the topic is placed first, and takes no lease placed elsewhere', async () => {
    const asked = context(other);
    const refused = await refusal(acquireLease(asked, 't'));
    expect([refused.reason, refused.details['owner_address']]).toEqual([OwnerReason.NOT_OWNER, 'other:6650']);
    expect(asked.calls).toEqual(['lookupTopic']);
  });
});

describe('takeUpLease (a lease handed over by a transfer)', () => {
  it('takes the lease up without asking the lookup', async () => {
    const handedOver = context(other);
    await takeUpLease(handedOver, 't');
    expect(handedOver.calls).toEqual(['acquireLease']);
  });

  it('answers NOT_OWNER naming the live session that still holds the lease', async () => {
    const refused = await refusal(takeUpLease(context(here, other), 't'));
    expect([refused.reason, refused.details['owner_address']]).toEqual([OwnerReason.NOT_OWNER, 'other:6650']);
  });
});
