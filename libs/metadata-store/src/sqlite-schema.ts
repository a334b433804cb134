import type Database from 'better-sqlite3';
import { LedgerlineError } from '@ledgerline/errors';
import { MetadataStoreReason } from './metadata-errors.js';

/** Bumped when the layout changes; the store refuses a file written by a newer layout. */
export const SQLITE_SCHEMA_VERSION = 1;

// One row per node keyed by (parent, name): the primary key's index is the
// parent/child index, so listing children is a range scan in byte order
// (BINARY collation compares UTF-8 bytes). Ephemeral nodes name their session.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS nodes (
  parent TEXT NOT NULL,
  name TEXT NOT NULL,
  value BLOB NOT NULL,
  version INTEGER NOT NULL,
  created_at_ms INTEGER NOT NULL,
  modified_at_ms INTEGER NOT NULL,
  session_id TEXT,
  PRIMARY KEY (parent, name)
);
CREATE INDEX IF NOT EXISTS nodes_by_session ON nodes (session_id) WHERE session_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY,
  ttl_ms INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_by_expiry ON sessions (expires_at_ms);
CREATE TABLE IF NOT EXISTS sequences (
  name TEXT PRIMARY KEY,
  value INTEGER NOT NULL
);
`;

// A node counts only while its session (if any) is live.
const LIVE = `(n.session_id IS NULL OR EXISTS (SELECT 1 FROM sessions s WHERE s.id = n.session_id AND s.expires_at_ms > @now))`;

export interface NodeRow {
  value: Buffer;
  version: number;
  created_at_ms: number;
  modified_at_ms: number;
  session_id: string | null;
  live: 0 | 1;
}

/** Creates the tables if needed and prepares every statement the store runs. */
export function prepareStatements(db: Database.Database) {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > SQLITE_SCHEMA_VERSION) {
    throw new LedgerlineError(
      'FAILED_PRECONDITION',
      MetadataStoreReason.STORE_VERSION_UNSUPPORTED,
      `the metadata file has schema version ${version}; this build reads up to ${SQLITE_SCHEMA_VERSION}`,
    );
  }
  // A file already laid out needs no write lock to open, so it opens while another process writes.
  if (version < SQLITE_SCHEMA_VERSION) {
    db.transaction(() => {
      db.exec(SCHEMA);
      db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`);
    }).immediate();
  }
  return {
    getNode: db.prepare<{ parent: string; name: string; now: number }, NodeRow>(
      `SELECT value, version, created_at_ms, modified_at_ms, session_id, ${LIVE} AS live
         FROM nodes n WHERE parent = @parent AND name = @name`,
    ),
    upsertNode: db.prepare(
      `INSERT INTO nodes (parent, name, value, version, created_at_ms, modified_at_ms, session_id)
         VALUES (@parent, @name, @value, @version, @createdAtMs, @now, @sessionId)
       ON CONFLICT (parent, name) DO UPDATE SET value = excluded.value, version = excluded.version,
         created_at_ms = excluded.created_at_ms, modified_at_ms = excluded.modified_at_ms,
         session_id = excluded.session_id`,
    ),
    deleteNode: db.prepare('DELETE FROM nodes WHERE parent = @parent AND name = @name'),
    children: db.prepare<{ parent: string; after: string; limit: number; now: number }, { name: string }>(
      `SELECT name FROM nodes n WHERE parent = @parent AND name > @after AND ${LIVE} ORDER BY name LIMIT @limit`,
    ),
    insertSession: db.prepare('INSERT INTO sessions (id, ttl_ms, expires_at_ms) VALUES (?, ?, ?)'),
    renewSession: db.prepare(
      'UPDATE sessions SET expires_at_ms = @expiresAtMs WHERE id = @id AND expires_at_ms > @now',
    ),
    liveSession: db.prepare<{ id: string; now: number }, { id: string }>(
      'SELECT id FROM sessions WHERE id = @id AND expires_at_ms > @now',
    ),
    expiredSessions: db.prepare<{ now: number; limit: number }, { id: string }>(
      'SELECT id FROM sessions WHERE expires_at_ms <= @now ORDER BY expires_at_ms LIMIT @limit',
    ),
    sessionNodes: db.prepare<[string], { parent: string; name: string }>(
      'SELECT parent, name FROM nodes WHERE session_id = ?',
    ),
    deleteSessionNodes: db.prepare('DELETE FROM nodes WHERE session_id = ?'),
    deleteSession: db.prepare('DELETE FROM sessions WHERE id = ?'),
    nextId: db.prepare<[string], { value: number }>(
      `INSERT INTO sequences (name, value) VALUES (?, 1)
       ON CONFLICT (name) DO UPDATE SET value = value + 1 RETURNING value`,
    ),
  };
}

export type SqliteStatements = ReturnType<typeof prepareStatements>;
