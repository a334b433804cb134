import { LedgerlineError } from '@ledgerline/errors';
import { OwnerReason } from './reasons.js';

/** Subscriptions whose names start with this are the owner's own (deduplication); clients cannot use them. */
export const RESERVED_SUBSCRIPTION_PREFIX = 'ledgerline.';

export function checkSubscriptionName(name: string): string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new LedgerlineError('INVALID_ARGUMENT', OwnerReason.INVALID_REQUEST, 'the request names no subscription');
  }
  if (name.startsWith(RESERVED_SUBSCRIPTION_PREFIX)) {
    throw new LedgerlineError(
      'INVALID_ARGUMENT',
      OwnerReason.RESERVED_SUBSCRIPTION_NAME,
      `subscription names starting with '${RESERVED_SUBSCRIPTION_PREFIX}' are reserved`,
    );
  }
  return name;
}
