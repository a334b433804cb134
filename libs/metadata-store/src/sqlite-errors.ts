import { LedgerlineError, ErrorReason } from '@ledgerline/errors';
import { MetadataStoreReason } from './metadata-errors.js';

/**
 * Turns a SQLite failure into a LedgerlineError. Codes are matched by prefix:
 * better-sqlite3 reports extended codes (SQLITE_BUSY_RECOVERY while another
 * process recovers the log after a crash, SQLITE_BUSY_SNAPSHOT, SQLITE_IOERR_*),
 * and each of them means the same as its base code to a caller.
 */
export function mapSqliteError(error: unknown): LedgerlineError {
  if (error instanceof LedgerlineError) return error;
  const code = String((error as { code?: unknown } | undefined)?.code ?? '');
  const message = error instanceof Error ? error.message : String(error);
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new LedgerlineError(
      'UNAVAILABLE',
      MetadataStoreReason.STORE_BUSY,
      `the metadata file is locked: ${message}`,
      {
        cause: error,
      },
    );
  }
  if (code === 'SQLITE_FULL') {
    return new LedgerlineError('RESOURCE_EXHAUSTED', ErrorReason.STORE_FULL, `the disk is full: ${message}`, {
      cause: error,
    });
  }
  const unreachable =
    code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_READONLY');
  // A failed mkdir of the file's folder (permissions, a file in the way) leaves the store unreachable too.
  const fileSystem =
    typeof (error as { errno?: unknown } | undefined)?.errno === 'number' && !code.startsWith('SQLITE_');
  if (unreachable || fileSystem || (error instanceof TypeError && /not open/.test(message))) {
    return new LedgerlineError(
      'UNAVAILABLE',
      ErrorReason.STORE_UNAVAILABLE,
      `the metadata file cannot be used: ${message}`,
      {
        cause: error,
      },
    );
  }
  return new LedgerlineError('INTERNAL', MetadataStoreReason.STORE_ERROR, `the metadata file failed: ${message}`, {
    cause: error,
  });
}
