import { LedgerlineError, ErrorReason } from '@ledgerline/errors';

/** The stable reasons ledger store calls fail with; programs branch on these. */
export const LedgerStoreReason = {
  LEDGER_EXISTS: 'LEDGER_EXISTS',
  LEDGER_NOT_FOUND: 'LEDGER_NOT_FOUND',
  LEDGER_FENCED: 'LEDGER_FENCED',
  LEDGER_CLOSED: 'LEDGER_CLOSED',
  ENTRY_NOT_CONFIRMED: 'ENTRY_NOT_CONFIRMED',
  BAD_LEDGER_ID: 'BAD_LEDGER_ID',
  BAD_ENTRY_ID: 'BAD_ENTRY_ID',
  BAD_ENTRY_RANGE: 'BAD_ENTRY_RANGE',
  BAD_ENTRY: 'BAD_ENTRY',
  EMPTY_APPEND: 'EMPTY_APPEND',
  ENTRY_TOO_LARGE: 'ENTRY_TOO_LARGE',
  APPEND_TOO_LARGE: 'APPEND_TOO_LARGE',
  READ_RANGE_TOO_LARGE: 'READ_RANGE_TOO_LARGE',
  BAD_PAGE_LIMIT: 'BAD_PAGE_LIMIT',
  /** A batch call carried more items than its bound allows (for the ledger store's infoMany / deleteMany, MAX_BATCH_LEDGERS ledgers): split it. */
  BATCH_TOO_LARGE: 'BATCH_TOO_LARGE',
  BAD_OWNER_TAGS: 'BAD_OWNER_TAGS',
  OWNER_TAGS_TOO_LARGE: 'OWNER_TAGS_TOO_LARGE',
  REPLICATION_INCOMPLETE: 'REPLICATION_INCOMPLETE',
  LEDGER_STORE_CORRUPT: 'LEDGER_STORE_CORRUPT',
} as const;

export function ledgerExists(ledgerId: number): LedgerlineError {
  return new LedgerlineError('ALREADY_EXISTS', LedgerStoreReason.LEDGER_EXISTS, `ledger ${ledgerId} already exists`, {
    details: { ledgerId: String(ledgerId) },
  });
}

export function ledgerNotFound(ledgerId: number): LedgerlineError {
  return new LedgerlineError('NOT_FOUND', LedgerStoreReason.LEDGER_NOT_FOUND, `ledger ${ledgerId} does not exist`, {
    details: { ledgerId: String(ledgerId) },
  });
}

export function ledgerFenced(ledgerId: number): LedgerlineError {
  return new LedgerlineError(
    'ABORTED',
    LedgerStoreReason.LEDGER_FENCED,
    `ledger ${ledgerId} was fenced by a recovering owner: this writer can no longer append or close it`,
    { details: { ledgerId: String(ledgerId) } },
  );
}

export function ledgerClosed(ledgerId: number): LedgerlineError {
  return new LedgerlineError(
    'FAILED_PRECONDITION',
    LedgerStoreReason.LEDGER_CLOSED,
    `ledger ${ledgerId} is closed: open a new ledger`,
    {
      details: { ledgerId: String(ledgerId) },
    },
  );
}

export function entryNotConfirmed(ledgerId: number, lastEntryId: number, lastAddConfirmed: number): LedgerlineError {
  return new LedgerlineError(
    'OUT_OF_RANGE',
    LedgerStoreReason.ENTRY_NOT_CONFIRMED,
    `entry ${lastEntryId} of ledger ${ledgerId} is past its last-add-confirmed ${lastAddConfirmed}`,
    {
      details: {
        ledgerId: String(ledgerId),
        lastEntryId: String(lastEntryId),
        lastAddConfirmed: String(lastAddConfirmed),
      },
    },
  );
}

export function storeUnavailable(backend: string, cause: unknown): LedgerlineError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new LedgerlineError(
    'UNAVAILABLE',
    ErrorReason.STORE_UNAVAILABLE,
    `the ${backend} ledger store is unavailable: ${detail}`,
    {
      cause,
    },
  );
}

export function storeClosed(backend: string): LedgerlineError {
  return new LedgerlineError(
    'FAILED_PRECONDITION',
    ErrorReason.STORE_CLOSED,
    `this ${backend} ledger store was closed`,
  );
}

/** A broken invariant of stored data: a bug or outside tampering, never bad input. */
export function storeCorrupt(message: string, details: Record<string, string> = {}): LedgerlineError {
  return new LedgerlineError('INTERNAL', LedgerStoreReason.LEDGER_STORE_CORRUPT, message, { details });
}
