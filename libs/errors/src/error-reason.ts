/**
 * Reasons that mean the same thing whichever package raises them, so a client
 * branches on one string: a configuration refused at start-up, a lost
 * compare-and-set, a store that is down, full or closed, or a failure nobody
 * gave a reason to.
 */
export const ErrorReason = {
  /** A thrown value that was not a LedgerlineError: a bug, never bad input. */
  INTERNAL_ERROR: 'INTERNAL_ERROR',
  /** A setting (environment, flag or options object) that is missing, malformed or out of its bounds. */
  INVALID_CONFIG: 'INVALID_CONFIG',
  /** A compare-and-set lost: the stored version is not the expected one. Re-read and retry. */
  BAD_VERSION: 'BAD_VERSION',
  /** A store (Redis, SQLite) cannot be reached or did not answer; retryable. */
  STORE_UNAVAILABLE: 'STORE_UNAVAILABLE',
  /** A store refused a write for lack of space. */
  STORE_FULL: 'STORE_FULL',
  /** The store object was closed by its owner; open a new one. */
  STORE_CLOSED: 'STORE_CLOSED',
} as const;

export type ErrorReasonValue = (typeof ErrorReason)[keyof typeof ErrorReason];
