/**
 * SQLite's `synchronous` setting as both stores take it. FULL syncs the
 * write-ahead log on every commit, so a committed write survives a power
 * loss; NORMAL syncs only at checkpoints, so the last commits can be lost on
 * power loss (never on a process crash). Spelled as SQLite documents it.
 */
export type SqliteSynchronous = 'FULL' | 'NORMAL';

export const SQLITE_SYNCHRONOUS_VALUES: readonly SqliteSynchronous[] = ['FULL', 'NORMAL'];

/** What a store uses unless told otherwise: durable commits. */
export const DEFAULT_SQLITE_SYNCHRONOUS: SqliteSynchronous = 'FULL';
