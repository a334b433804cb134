import { invalidArgument, LedgerlineError } from '@ledgerline/errors';

export function badVersion(path: string, expected: string, actual: number | undefined): LedgerlineError {
  const found = actual === undefined ? 'the node does not exist' : `the node is at version ${actual}`;
  return new LedgerlineError('ABORTED', 'BAD_VERSION', `${path}: expected ${expected} but ${found}`, {
    details: { path, expected, actual: actual === undefined ? 'absent' : String(actual) },
  });
}

export function sessionExpired(sessionId: string): LedgerlineError {
  return new LedgerlineError(
    'FAILED_PRECONDITION',
    'SESSION_EXPIRED',
    `session ${sessionId} is closed or expired; open a new session`,
    { details: { sessionId } },
  );
}

export function foreignSession(): LedgerlineError {
  return invalidArgument('FOREIGN_SESSION', 'the session was not opened by this store');
}

export function storeClosed(): LedgerlineError {
  return new LedgerlineError('FAILED_PRECONDITION', 'STORE_CLOSED', 'the metadata store is closed');
}

export function tooManySessions(limit: number): LedgerlineError {
  return new LedgerlineError(
    'RESOURCE_EXHAUSTED',
    'TOO_MANY_SESSIONS',
    `this store already holds ${limit} open sessions; close unused ones`,
  );
}
