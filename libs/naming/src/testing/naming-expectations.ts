import { LedgerlineError } from '@ledgerline/errors';

/** For the specs: runs `run` and expects it to throw INVALID_ARGUMENT with `reason`; returns the error. */
export function expectNamingError(run: () => unknown, reason: string): LedgerlineError {
  try {
    run();
  } catch (thrown) {
    expect(thrown).toBeInstanceOf(LedgerlineError);
    expect(thrown).toMatchObject({ code: 'INVALID_ARGUMENT', reason });
    return thrown as LedgerlineError;
  }
  throw new Error(`expected a ${reason} error`);
}
