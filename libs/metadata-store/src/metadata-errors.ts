import { invalidArgument, LedgerlineError, ErrorReason } from '@ledgerline/errors';

/** The stable reasons metadata store calls fail with; programs branch on these. */
export const MetadataStoreReason = {
  BAD_EXPECTED_VERSION: 'BAD_EXPECTED_VERSION',
  BAD_PAGE_SIZE: 'BAD_PAGE_SIZE',
  BAD_PAGE_TOKEN: 'BAD_PAGE_TOKEN',
  BAD_PATH: 'BAD_PATH',
  BAD_SEQUENCE_NAME: 'BAD_SEQUENCE_NAME',
  BAD_SESSION_TTL: 'BAD_SESSION_TTL',
  BAD_VALUE: 'BAD_VALUE',
  FOREIGN_SESSION: 'FOREIGN_SESSION',
  PATH_IS_ROOT: 'PATH_IS_ROOT',
  PATH_TOO_LONG: 'PATH_TOO_LONG',
  SEQUENCE_EXHAUSTED: 'SEQUENCE_EXHAUSTED',
  SEQUENCE_FAILED: 'SEQUENCE_FAILED',
  SESSION_EXPIRED: 'SESSION_EXPIRED',
  STORE_BUSY: 'STORE_BUSY',
  STORE_ERROR: 'STORE_ERROR',
  STORE_VERSION_UNSUPPORTED: 'STORE_VERSION_UNSUPPORTED',
  TOO_MANY_SESSIONS: 'TOO_MANY_SESSIONS',
  VALUE_TOO_LARGE: 'VALUE_TOO_LARGE',
} as const;

export function badVersion(path: string, expected: string, actual: number | undefined): LedgerlineError {
  const found = actual === undefined ? 'the node does not exist' : `the node is at version ${actual}`;
  return new LedgerlineError('ABORTED', ErrorReason.BAD_VERSION, `${path}: expected ${expected} but ${found}`, {
    details: { path, expected, actual: actual === undefined ? 'absent' : String(actual) },
  });
}

export function sessionExpired(sessionId: string): LedgerlineError {
  return new LedgerlineError(
    'FAILED_PRECONDITION',
    MetadataStoreReason.SESSION_EXPIRED,
    `session ${sessionId} is closed or expired; open a new session`,
    { details: { sessionId } },
  );
}

export function foreignSession(): LedgerlineError {
  return invalidArgument(MetadataStoreReason.FOREIGN_SESSION, 'the session was not opened by this store');
}

export function storeClosed(): LedgerlineError {
  return new LedgerlineError('FAILED_PRECONDITION', ErrorReason.STORE_CLOSED, 'the metadata store is closed');
}

export function tooManySessions(limit: number): LedgerlineError {
  return new LedgerlineError(
    'RESOURCE_EXHAUSTED',
    MetadataStoreReason.TOO_MANY_SESSIONS,
    `this store already holds ${limit} open sessions; close unused ones`,
  );
}
