import { LedgerlineError } from '@ledgerline/errors';

/** The stable reasons ledger store calls fail with; programs branch on these. */
export const LedgerStoreReason = {
  ledgerExists: 'LEDGER_EXISTS',
  ledgerNotFound: 'LEDGER_NOT_FOUND',
  ledgerFenced: 'LEDGER_FENCED',
  ledgerClosed: 'LEDGER_CLOSED',
  entryNotConfirmed: 'ENTRY_NOT_CONFIRMED',
  badLedgerId: 'BAD_LEDGER_ID',
  badEntryId: 'BAD_ENTRY_ID',
  badEntryRange: 'BAD_ENTRY_RANGE',
  badEntry: 'BAD_ENTRY',
  emptyAppend: 'EMPTY_APPEND',
  entryTooLarge: 'ENTRY_TOO_LARGE',
  appendTooLarge: 'APPEND_TOO_LARGE',
  readRangeTooLarge: 'READ_RANGE_TOO_LARGE',
  badPageLimit: 'BAD_PAGE_LIMIT',
  badOwnerTags: 'BAD_OWNER_TAGS',
  ownerTagsTooLarge: 'OWNER_TAGS_TOO_LARGE',
  badConfig: 'BAD_LEDGER_STORE_CONFIG',
  storeUnavailable: 'STORE_UNAVAILABLE',
  storeFull: 'STORE_FULL',
  storeClosed: 'STORE_CLOSED',
  replicationIncomplete: 'REPLICATION_INCOMPLETE',
  storeCorrupt: 'LEDGER_STORE_CORRUPT',
} as const;

const R = LedgerStoreReason;

export function ledgerExists(ledgerId: number): LedgerlineError {
  return new LedgerlineError('ALREADY_EXISTS', R.ledgerExists, `ledger ${ledgerId} already exists`, {
    details: { ledgerId: String(ledgerId) },
  });
}

export function ledgerNotFound(ledgerId: number): LedgerlineError {
  return new LedgerlineError('NOT_FOUND', R.ledgerNotFound, `ledger ${ledgerId} does not exist`, {
    details: { ledgerId: String(ledgerId) },
  });
}

export function ledgerFenced(ledgerId: number): LedgerlineError {
  return new LedgerlineError(
    'ABORTED',
    R.ledgerFenced,
    `ledger ${ledgerId} was fenced by a recovering owner: this writer can no longer append or close it`,
    { details: { ledgerId: String(ledgerId) } },
  );
}

export function ledgerClosed(ledgerId: number): LedgerlineError {
  return new LedgerlineError('FAILED_PRECONDITION', R.ledgerClosed, `ledger ${ledgerId} is closed: open a new ledger`, {
    details: { ledgerId: String(ledgerId) },
  });
}

export function entryNotConfirmed(ledgerId: number, lastEntryId: number, lastAddConfirmed: number): LedgerlineError {
  return new LedgerlineError(
    'OUT_OF_RANGE',
    R.entryNotConfirmed,
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
    R.storeUnavailable,
    `the ${backend} ledger store is unavailable: ${detail}`,
    {
      cause,
    },
  );
}

export function storeClosed(backend: string): LedgerlineError {
  return new LedgerlineError('FAILED_PRECONDITION', R.storeClosed, `this ${backend} ledger store was closed`);
}

/** A broken invariant of stored data: a bug or outside tampering, never bad input. */
export function storeCorrupt(message: string, details: Record<string, string> = {}): LedgerlineError {
  return new LedgerlineError('INTERNAL', R.storeCorrupt, message, { details });
}
