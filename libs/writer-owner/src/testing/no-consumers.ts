import { LedgerlineError } from '@ledgerline/errors';

/** A reason only this test double raises. */
const TestReason = { NO_CONSUMERS_IN_THIS_TEST: 'NO_CONSUMERS_IN_THIS_TEST' } as const;
import type { ConsumeBackend } from '../writer-owner.js';

/** A consume side that refuses every consumer: for tests of publishing, cursors and offsets alone. */
export const noConsumers = (): ConsumeBackend => ({
  consume: () => {
    throw new LedgerlineError(
      'FAILED_PRECONDITION',
      TestReason.NO_CONSUMERS_IN_THIS_TEST,
      'this test serves no consumers',
    );
  },
  connectedConsumers: () => 0,
  subscriptionStats: () => Promise.resolve(undefined),
  seek: () => Promise.resolve(undefined),
  unsubscribed: () => Promise.resolve(),
});
