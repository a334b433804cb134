import { LedgerlineError } from '@ledgerline/errors';

/**
 * The stable reasons reading the stored ManagedLedgerInfo format and the
 * pending-deletions index fails with. `ManagedLedgerReason` of
 * @ledgerline/managed-ledger carries them too.
 */
export const LedgerInfoReason = {
  MANAGED_LEDGER_INFO_CORRUPT: 'MANAGED_LEDGER_INFO_CORRUPT',
  METADATA_VALUE_OUT_OF_RANGE: 'METADATA_VALUE_OUT_OF_RANGE',
  /** A pending-deletion index shard number out of 0 to PENDING_DELETION_SHARDS - 1. */
  INVALID_SHARD: 'INVALID_SHARD',
  /** A pending-deletion index entry this code never wrote. */
  CORRUPT_PENDING_DELETION_ENTRY: 'CORRUPT_PENDING_DELETION_ENTRY',
} as const;

export function corruptInfoError(what: string, cause: unknown): LedgerlineError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new LedgerlineError(
    'DATA_LOSS',
    LedgerInfoReason.MANAGED_LEDGER_INFO_CORRUPT,
    `stored ${what} does not decode: ${detail}`,
    { cause },
  );
}
