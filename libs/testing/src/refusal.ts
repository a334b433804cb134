import { LedgerlineError } from '@ledgerline/errors';

/** Awaits a call that must fail and returns its error as a LedgerlineError; throws when it succeeds. */
export async function refusal(call: Promise<unknown>): Promise<LedgerlineError> {
  try {
    await call;
  } catch (error) {
    return LedgerlineError.from(error);
  }
  throw new Error('expected the call to fail, but it succeeded');
}
