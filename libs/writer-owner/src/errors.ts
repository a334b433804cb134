import { LedgerlineError } from '@ledgerline/errors';
import { ManagedLedgerReason } from '@ledgerline/managed-ledger';
import { WriterReason } from './reasons.js';

export function topicUnloaded(topic: string, why: string): LedgerlineError {
  return new LedgerlineError(
    'UNAVAILABLE',
    WriterReason.topicUnloaded,
    `${topic} was unloaded from this owner (${why}): look it up again and retry`,
    { details: { topic } },
  );
}

export function notOwner(topic: string, ownerAddress: string): LedgerlineError {
  return new LedgerlineError('FAILED_PRECONDITION', WriterReason.notOwner, `${topic} is served by ${ownerAddress}`, {
    details: { topic, owner_address: ownerAddress },
  });
}

export function notServing(): LedgerlineError {
  return new LedgerlineError(
    'UNAVAILABLE',
    WriterReason.notServing,
    'this writer owner is starting or draining: retry shortly, after a lookup',
  );
}

/** Failures that mean another owner has the topic now: this instance must let go of it. */
const OWNERSHIP_LOST = new Set<string>([
  ManagedLedgerReason.ledgerFenced,
  ManagedLedgerReason.managedLedgerFenced,
  ManagedLedgerReason.cursorFenced,
]);

export function isOwnershipLost(error: LedgerlineError): boolean {
  return OWNERSHIP_LOST.has(error.reason);
}

/** Failures that mean the managed ledger was closed under the call (unload, drain). */
export function isClosed(error: LedgerlineError): boolean {
  return error.reason === ManagedLedgerReason.managedLedgerClosed || error.reason === ManagedLedgerReason.cursorClosed;
}

export function subscriptionNotFound(topic: string, subscription: string): LedgerlineError {
  return new LedgerlineError(
    'NOT_FOUND',
    WriterReason.subscriptionNotFound,
    `${topic} has no subscription ${subscription}`,
    {
      details: { topic, subscription },
    },
  );
}
