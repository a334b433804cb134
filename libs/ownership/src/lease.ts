import { LedgerlineError } from '@ledgerline/errors';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';
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
 * Renews an owner's lease on `topic`; the reason when the lease is gone (lost,
 * its session expired, the topic deleted), so the owner unloads the topic.
 * Any other failure (metadata unreachable) is left to the next round, which
 * runs well within the TTL.
 */
export async function renewLeaseOrLoss(
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
