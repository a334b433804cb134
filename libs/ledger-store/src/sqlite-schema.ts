import type { SqliteSynchronous } from '@ledgerline/storage-kit';
import type Database from 'better-sqlite3';
import { LedgerlineError, ErrorReason } from '@ledgerline/errors';
import { LedgerStoreReason, storeCorrupt, storeUnavailable } from './errors.js';

/**
 * The stored layout, versioned through PRAGMA user_version so a newer layout
 * is never misread by older code. Version 1:
 * - ledgers: one row per ledger. `fenced` is 1 once anyone but the writer
 *   fenced or closed the ledger; it outlives the move to 'closed' so the old
 *   writer keeps hearing LEDGER_FENCED. lac = -1 for an empty ledger;
 *   size = sum of entry bytes.
 * - entries: one row per entry, ids dense from 0 to lac.
 */
export const SQLITE_SCHEMA_VERSION = 1;

const SCHEMA_V1 = `
CREATE TABLE ledgers (
  id INTEGER PRIMARY KEY,
  state TEXT NOT NULL CHECK (state IN ('open', 'fenced', 'closed')),
  fenced INTEGER NOT NULL CHECK (fenced IN (0, 1)),
  lac INTEGER NOT NULL CHECK (lac >= -1),
  size INTEGER NOT NULL CHECK (size >= 0),
  owner_tags TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
CREATE TABLE entries (
  ledger_id INTEGER NOT NULL,
  entry_id INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (ledger_id, entry_id)
) STRICT;
`;

/** Sets the pragmas and creates or checks the schema. */
export function prepareDatabase(db: Database.Database, synchronous: SqliteSynchronous, busyTimeoutMs: number): void {
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  // A file already laid out needs no write lock to open, so it opens while another process writes.
  if (checkLayoutVersion(db) === SQLITE_SCHEMA_VERSION) return;
  db.transaction(() => {
    if (checkLayoutVersion(db) === SQLITE_SCHEMA_VERSION) return;
    db.exec(SCHEMA_V1);
    db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`);
  }).immediate();
}

/** The file's layout version: this build's, or 0 for a new file; any other is refused. */
function checkLayoutVersion(db: Database.Database): number {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version !== 0 && version !== SQLITE_SCHEMA_VERSION) {
    throw new LedgerlineError(
      'FAILED_PRECONDITION',
      LedgerStoreReason.LEDGER_STORE_CORRUPT,
      `the ledger store file has layout version ${version}; this build reads version ${SQLITE_SCHEMA_VERSION} only`,
    );
  }
  return version;
}

/** Turns a SQLite failure into a LedgerlineError a caller can act on. */
export function fromSqliteError(thrown: unknown): LedgerlineError {
  if (thrown instanceof LedgerlineError) return thrown;
  const { code, errno } = (thrown ?? {}) as { code?: unknown; errno?: unknown };
  // A failed mkdir of the database folder (permissions, a file in the way) leaves the store unreachable.
  if (typeof errno === 'number' && typeof code === 'string' && !code.startsWith('SQLITE_')) {
    return storeUnavailable('sqlite', thrown);
  }
  if (typeof code !== 'string') return LedgerlineError.from(thrown);
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') || code.startsWith('SQLITE_IOERR')) {
    return storeUnavailable('sqlite', thrown);
  }
  if (code === 'SQLITE_CANTOPEN' || code.startsWith('SQLITE_READONLY')) return storeUnavailable('sqlite', thrown);
  if (code === 'SQLITE_FULL') {
    return new LedgerlineError('RESOURCE_EXHAUSTED', ErrorReason.STORE_FULL, 'the ledger store disk is full', {
      cause: thrown,
    });
  }
  if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB') {
    return storeCorrupt(`the ledger store file is damaged: ${(thrown as Error).message}`);
  }
  return LedgerlineError.from(thrown);
}
