import { LedgerlineError } from '@ledgerline/errors';
import type { ConsumeBackend } from '../writer-owner.js';

/** A consume side that refuses every consumer: for tests of publishing, cursors and offsets alone. */
export const noConsumers = (): ConsumeBackend => ({
  consume: () => {
    throw new LedgerlineError('FAILED_PRECONDITION', 'NO_CONSUMERS_IN_THIS_TEST', 'this test serves no consumers');
  },
  subscriptionMoved: () => undefined,
  connectedConsumers: () => 0,
  subscriptionStats: () => undefined,
});
