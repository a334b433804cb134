import { LedgerlineError } from '@ledgerline/errors';
import type { ConsumeBackend, WriterOwner } from './writer-owner.js';

/** The consume side of a writer owner. */
export function consumeBackend(_owner: WriterOwner): ConsumeBackend {
  return {
    consume: () => {
      throw new LedgerlineError('FAILED_PRECONDITION', 'CONSUME_UNAVAILABLE', 'consuming is not served yet');
    },
    subscriptionMoved: () => undefined,
    connectedConsumers: () => 0,
    subscriptionStats: () => undefined,
  };
}
