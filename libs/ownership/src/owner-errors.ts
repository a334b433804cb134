import { LedgerlineError } from '@ledgerline/errors';
import { OwnerReason } from './reasons.js';

/** Another instance serves the topic: the client looks it up there (`owner_address`). */
export function notOwner(topic: string, ownerAddress: string): LedgerlineError {
  return new LedgerlineError('FAILED_PRECONDITION', OwnerReason.NOT_OWNER, `${topic} is served by ${ownerAddress}`, {
    details: { topic, owner_address: ownerAddress },
  });
}

/** The topic left this owner while the client used it: retryable, after a fresh lookup. */
export function topicUnloaded(topic: string, why: string): LedgerlineError {
  return new LedgerlineError(
    'UNAVAILABLE',
    OwnerReason.TOPIC_UNLOADED,
    `${topic} was unloaded from this owner (${why}): look it up again and retry`,
    { details: { topic } },
  );
}
