import { LedgerlineError } from '@ledgerline/errors';
import { MAX_LEASES_PER_CONFIRM, MetadataServiceReason } from '@ledgerline/metadata-contract';
import type { MetadataClients } from './metadata-clients.js';
import { notOwner } from './owner-errors.js';
import type { OwnerIdentity } from './owner-identity.js';
import type { OwnerSession } from './owner-session.js';

/** What taking a lease needs: the lookup, the session the lease lives in, and who this owner is. */
export interface LeaseContext {
  lookup: MetadataClients['lookup'];
  session: Pick<OwnerSession, 'sessionId'>;
  identity: OwnerIdentity;
}

/**
 * Takes the lease on `topic` in this owner's session when the lookup names
 * this instance. Another instance named, or still holding the lease
 * (LEASE_HELD), is NOT_OWNER with that instance's address, so the client goes
 * there. `asked` is the name the request used, which the refusal repeats (a
 * read-only owner leases the reader topic a client may have asked for by its
 * writer name).
 */
export async function acquireLease(context: LeaseContext, topic: string, asked = topic): Promise<void> {
  const answer = await context.lookup.lookupTopic({ topic });
  if (answer.instanceId !== context.identity.instanceId) throw notOwner(asked, answer.advertisedAddress);
  await takeUpLease(context, topic, asked);
}

/**
 * Takes the lease on `topic` in this owner's session without asking where
 * the topic is placed: for a lease another owner handed over to this one
 * (a transfer's LoadTopic), which the lookup would only confirm. The
 * metadata service still refuses a lease another live session holds
 * (NOT_OWNER with its address).
 */
export async function takeUpLease(context: LeaseContext, topic: string, asked = topic): Promise<void> {
  try {
    await context.lookup.acquireLease({ topic, sessionId: context.session.sessionId });
  } catch (thrown) {
    const error = LedgerlineError.from(thrown);
    if (error.reason === MetadataServiceReason.LEASE_HELD)
      throw notOwner(asked, error.details['advertisedAddress'] ?? '');
    throw error;
  }
}

/**
 * Confirms every lease an owner holds: the topics whose lease is gone (lost,
 * its session expired, its namespace deleted) with the reason, so the owner
 * unloads them. One ConfirmLeases call per MAX_LEASES_PER_CONFIRM topics,
 * where one RenewLease per topic wrote the session each time. A metadata
 * service that does not serve ConfirmLeases yet (an upgrade under way) is
 * asked per topic. Any other failure throws: the next round, well within the
 * TTL, asks again.
 */
export async function confirmLeases(
  lookup: MetadataClients['lookup'],
  sessionId: string,
  topics: readonly string[],
  ttlMs: number,
): Promise<Map<string, string>> {
  const lost = new Map<string, string>();
  for (let from = 0; from < topics.length; from += MAX_LEASES_PER_CONFIRM) {
    const chunk = topics.slice(from, from + MAX_LEASES_PER_CONFIRM);
    try {
      const answer = await lookup.confirmLeases({ sessionId, topics: chunk }, { deadlineMs: ttlMs });
      for (const each of answer.lost) lost.set(each.topic, each.reason);
    } catch (thrown) {
      const error = LedgerlineError.from(thrown);
      if (error.reason === MetadataServiceReason.SESSION_EXPIRED) {
        for (const topic of chunk) lost.set(topic, error.reason);
      } else if (error.code === 'UNIMPLEMENTED') {
        for (const topic of chunk) {
          const why = await renewLeaseOrLoss(lookup, topic, sessionId, ttlMs);
          if (why !== undefined) lost.set(topic, why);
        }
      } else {
        throw error;
      }
    }
  }
  return lost;
}

/** RenewLease for one topic: the reason when the lease is gone; undefined when held or when the call failed. */
async function renewLeaseOrLoss(
  lookup: MetadataClients['lookup'],
  topic: string,
  sessionId: string,
  ttlMs: number,
): Promise<string | undefined> {
  try {
    await lookup.renewLease({ topic, sessionId }, { deadlineMs: ttlMs });
    return undefined;
  } catch (thrown) {
    const error = LedgerlineError.from(thrown);
    const gone =
      error.reason === MetadataServiceReason.LEASE_LOST ||
      error.reason === MetadataServiceReason.SESSION_EXPIRED ||
      error.code === 'NOT_FOUND';
    return gone ? error.reason : undefined;
  }
}
