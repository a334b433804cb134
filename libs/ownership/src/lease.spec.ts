import { LedgerlineError } from '@ledgerline/errors';
import { MAX_LEASES_PER_CONFIRM, MetadataServiceReason } from '@ledgerline/metadata-contract';
import { RpcReason } from '@ledgerline/rpc';
import { refusal } from '@ledgerline/testing';
import { acquireLease, confirmLeases, takeUpLease, type LeaseContext } from './lease.js';
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

describe('confirmLeases', () => {
  /** A lookup whose ConfirmLeases answers with `answer` per call (or throws it), recording each call's topics. */
  function lookup(answer: (topics: string[]) => string[] | LedgerlineError) {
    const calls: string[][] = [];
    const renewed: string[] = [];
    const client = {
      confirmLeases: async (request: { topics: string[] }) => {
        calls.push(request.topics);
        const outcome = answer(request.topics);
        if (outcome instanceof LedgerlineError) throw outcome;
        return { lost: outcome.map((topic) => ({ topic, reason: MetadataServiceReason.LEASE_LOST, message: 'lost' })) };
      },
      renewLease: async (request: { topic: string }) => {
        renewed.push(request.topic);
        if (request.topic.endsWith('-lost'))
          throw new LedgerlineError('FAILED_PRECONDITION', MetadataServiceReason.LEASE_LOST, 'lost');
        return {};
      },
    };
    return { calls, renewed, client: client as never };
  }
  const names = (count: number) => Array.from({ length: count }, (_, i) => `t${i}`);

  it('asks once per MAX_LEASES_PER_CONFIRM topics and answers the lost ones with their reason', async () => {
    const asked = lookup((topics) => topics.filter((topic) => topic === 't3' || topic === 't1500'));
    const lost = await confirmLeases(asked.client, 's1', names(MAX_LEASES_PER_CONFIRM + 600), 5_000);
    expect(asked.calls.map((topics) => topics.length)).toEqual([MAX_LEASES_PER_CONFIRM, 600]);
    expect([...lost]).toEqual([
      ['t3', 'LEASE_LOST'],
      ['t1500', 'LEASE_LOST'],
    ]);
    expect(await confirmLeases(asked.client, 's1', [], 5_000)).toEqual(new Map());
    expect(asked.calls).toHaveLength(2);
  });

  it('counts every topic lost when the session expired', async () => {
    const expired = new LedgerlineError('NOT_FOUND', MetadataServiceReason.SESSION_EXPIRED, 'expired');
    const lost = await confirmLeases(lookup(() => expired).client, 's1', ['a', 'b'], 5_000);
    expect([...lost]).toEqual([
      ['a', 'SESSION_EXPIRED'],
      ['b', 'SESSION_EXPIRED'],
    ]);
  });

  it('renews topic by topic against a metadata service without ConfirmLeases', async () => {
    const older = lookup(() => new LedgerlineError('UNIMPLEMENTED', RpcReason.HANDLER_MISSING, 'unknown method'));
    const lost = await confirmLeases(older.client, 's1', ['a', 'b-lost', 'c'], 5_000);
    expect(older.renewed).toEqual(['a', 'b-lost', 'c']);
    expect([...lost]).toEqual([['b-lost', 'LEASE_LOST']]);
  });

  it('throws any other failure, counting no lease lost, so the next round asks again', async () => {
    const down = lookup(() => new LedgerlineError('UNAVAILABLE', RpcReason.TRANSPORT_UNAVAILABLE, 'down'));
    await expect(confirmLeases(down.client, 's1', ['a'], 5_000)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(down.renewed).toEqual([]);
  });
});
