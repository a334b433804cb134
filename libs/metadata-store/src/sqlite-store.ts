import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { invalidArgument, LedgerlineError, ErrorReason } from '@ledgerline/errors';
import { ChangePublisher } from './change-publisher.js';
import {
  badVersion,
  foreignSession,
  sessionExpired,
  storeClosed,
  tooManySessions,
  MetadataStoreReason,
} from './metadata-errors.js';
import {
  backgroundErrors,
  BackgroundErrorKind,
  DEFAULT_SQLITE_SYNCHRONOUS,
  isSqliteBusy,
  LOCK_ATTEMPT_MS,
  LOCK_RETRY_MS,
  SqliteLockQueue,
  startSqliteCheckpointer,
  type BackgroundErrors,
  type SqliteCheckpointer,
  type SqliteSynchronous,
} from '@ledgerline/storage-kit';
import { mapSqliteError } from './sqlite-errors.js';
import { groupCommit } from './sqlite-group-commit.js';
import { prepareStatements, type NodeRow, type SqliteStatements } from './sqlite-schema.js';
import { StoreSession, type SessionBackend } from './store-session.js';
import {
  DEFAULT_SESSION_SWEEP_INTERVAL_MS,
  MAX_OPEN_SESSIONS,
  type ChildrenOptions,
  type ChildrenPage,
  type DeleteOptions,
  type ExpectedVersion,
  type MetadataChange,
  type MetadataSession,
  type MetadataStore,
  type MetadataStoreOptions,
  type PutOptions,
  type SessionOptions,
  type VersionedValue,
} from './store.js';
import {
  anyPath,
  nodePath,
  joinPath,
  resolveChildrenOptions,
  resolveMaxValueBytes,
  validateExpectedVersion,
  validateSequenceName,
  validateTtl,
  validateValue,
  type PathParts,
} from './validate.js';

export interface SqliteMetadataStoreOptions extends MetadataStoreOptions {
  /** The database file; its folder is created when missing. One of path or database. */
  path?: string;
  /** An open better-sqlite3 handle to use instead of opening `path`; the caller closes it. */
  database?: Database.Database;
  /**
   * 'FULL' (default): every commit reaches the disk before the call returns, so
   * an acknowledged write survives a power cut: metadata is the source of truth
   * and is written rarely, so it pays the fsync. 'NORMAL': commits survive a
   * process crash but the last ones may be lost in a power cut (for tests and
   * throwaway data).
   */
  synchronous?: SqliteSynchronous;
  /**
   * How long a call waits for another process's lock before UNAVAILABLE /
   * STORE_BUSY; default 5000. The wait runs on timers, so the event loop keeps serving.
   */
  busyTimeoutMs?: number;
}

/** Sessions one sweep removes at most; the rest wait for the next sweep. */
const SWEEP_BATCH = 100;
const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/**
 * The embedded metadata store of standalone mode: one SQLite file in WAL mode.
 * Writes run in IMMEDIATE transactions (grouped, see groupCommit), so
 * compare-and-set holds even with several processes on the same file.
 */
export class SqliteMetadataStore implements MetadataStore {
  private readonly db: Database.Database;
  private readonly ownsDatabase: boolean;
  private readonly statements: SqliteStatements;
  private readonly publisher: ChangePublisher;
  private readonly maxValueBytes: number;
  private readonly sessions = new Map<string, StoreSession>();
  private readonly sessionBackend: SessionBackend;
  private readonly sweepTimer: NodeJS.Timeout;
  private readonly writes: SqliteLockQueue;
  private readonly errors: BackgroundErrors;
  /** WAL checkpoints run on a thread of their own, not inside a commit on the event loop. */
  private readonly checkpointer: SqliteCheckpointer | undefined;
  private readonly busyTimeoutMs: number;
  private closed = false;

  constructor(options: SqliteMetadataStoreOptions) {
    this.maxValueBytes = resolveMaxValueBytes(options.maxValueBytes);
    this.busyTimeoutMs = resolveBusyTimeout(options.busyTimeoutMs);
    this.ownsDatabase = options.database === undefined;
    this.db = options.database ?? openDatabase(options.path);
    try {
      // Opening may wait for another process's lock the usual way (blocking): it happens once.
      this.db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
      this.db.pragma('journal_mode = WAL');
      this.db.pragma(`synchronous = ${options.synchronous ?? DEFAULT_SQLITE_SYNCHRONOUS}`);
      this.statements = prepareStatements(this.db);
      // From here on lock waits run on timers (groupCommit, query): SQLite itself only polls briefly.
      this.db.pragma(`busy_timeout = ${Math.min(LOCK_ATTEMPT_MS, this.busyTimeoutMs)}`);
    } catch (error) {
      if (this.ownsDatabase) this.db.close();
      throw mapSqliteError(error);
    }
    this.publisher = new ChangePublisher(options.bus);
    this.errors = backgroundErrors('metadata-store', options);
    this.writes = groupCommit(this.db, mapSqliteError, this.busyTimeoutMs);
    // A database handed in is checkpointed by whoever opened it.
    this.checkpointer = this.ownsDatabase
      ? startSqliteCheckpointer(this.db, {
          onError: (error) => this.errors.report(BackgroundErrorKind.WAL_CHECKPOINT, error),
        })
      : undefined;
    this.sessionBackend = {
      renew: (id, ttlMs) => this.write(() => this.renewSession(id, ttlMs)),
      release: (id) => this.removeSession(id),
      expired: (id) =>
        void this.removeSession(id).catch((error: unknown) =>
          this.errors.report(BackgroundErrorKind.SESSION_REMOVAL, error),
        ),
    };
    const interval = options.sessionSweepIntervalMs ?? DEFAULT_SESSION_SWEEP_INTERVAL_MS;
    this.sweepTimer = setInterval(
      () =>
        void this.sweepExpiredSessions().catch((error: unknown) =>
          this.errors.report(BackgroundErrorKind.SESSION_SWEEP, error),
        ),
      interval,
    );
    this.sweepTimer.unref();
  }

  async get(path: string): Promise<VersionedValue | undefined> {
    const parts = anyPath(path);
    const row = await this.query(() =>
      this.statements.getNode.get({ parent: parts.parent, name: parts.name, now: Date.now() }),
    );
    return row?.live === 1 ? toVersionedValue(row) : undefined;
  }

  async exists(path: string): Promise<boolean> {
    return (await this.get(path)) !== undefined;
  }

  async put(path: string, value: Uint8Array, options: PutOptions = {}): Promise<number> {
    const parts = nodePath(path);
    validateValue(value, this.maxValueBytes);
    validateExpectedVersion(options.expectedVersion, true);
    const sessionId = this.ownSessionId(options.session);
    const change = await this.write(() => this.applyPut(parts, value, options.expectedVersion, sessionId));
    await this.publisher.publish(change);
    return change.version;
  }

  async delete(path: string, options: DeleteOptions = {}): Promise<void> {
    const parts = nodePath(path);
    validateExpectedVersion(options.expectedVersion, false);
    const change = await this.write(() => this.applyDelete(parts, options.expectedVersion));
    if (change !== undefined) await this.publisher.publish(change);
  }

  async children(path: string, options?: ChildrenOptions): Promise<ChildrenPage> {
    anyPath(path);
    const { after, limit } = resolveChildrenOptions(options);
    const rows = await this.query(() =>
      this.statements.children.all({ parent: path, after, limit: limit + 1, now: Date.now() }),
    );
    const names = rows.slice(0, limit).map((row) => row.name);
    return rows.length > limit ? { names, next: names[names.length - 1] as string } : { names };
  }

  async openSession(options: SessionOptions): Promise<MetadataSession> {
    validateTtl(options?.ttlMs);
    if (this.sessions.size >= MAX_OPEN_SESSIONS) throw tooManySessions(MAX_OPEN_SESSIONS);
    const id = randomUUID();
    const now = Date.now();
    await this.write(() => this.statements.insertSession.run(id, options.ttlMs, now + options.ttlMs));
    const session = new StoreSession(id, options.ttlMs, this.sessionBackend, (s) => this.sessions.delete(s.id), now);
    this.sessions.set(id, session);
    return session;
  }

  async nextId(sequence: string): Promise<number> {
    validateSequenceName(sequence);
    const row = await this.write(() => this.statements.nextId.get(sequence));
    if (row === undefined)
      throw new LedgerlineError('INTERNAL', MetadataStoreReason.SEQUENCE_FAILED, `sequence ${sequence} gave no id`);
    return row.value;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    clearInterval(this.sweepTimer);
    await Promise.allSettled([...this.sessions.values()].map((session) => session.close()));
    this.closed = true;
    this.writes.drainNow();
    // Its connection closes first: the store's, then the last, folds the log into the file and removes it.
    await this.checkpointer?.close();
    if (this.ownsDatabase) this.db.close();
  }

  /** Removes the sessions whose TTL ran out (their owner stopped renewing) with their ephemeral nodes. */
  async sweepExpiredSessions(): Promise<void> {
    const expired = await this.query(() =>
      this.statements.expiredSessions.all({ now: Date.now(), limit: SWEEP_BATCH }),
    );
    for (const { id } of expired) {
      await this.removeSession(id);
      this.sessions.get(id)?.markExpired();
    }
  }

  private applyPut(
    parts: PathParts,
    value: Uint8Array,
    expected: ExpectedVersion | undefined,
    sessionId: string | undefined,
  ): MetadataChange {
    const now = Date.now();
    const row = this.statements.getNode.get({ parent: parts.parent, name: parts.name, now });
    const live = row?.live === 1 ? row : undefined;
    if (expected === 'absent' && live !== undefined) throw badVersion(parts.path, 'absent', live.version);
    if (typeof expected === 'number' && live?.version !== expected) {
      throw badVersion(parts.path, String(expected), live?.version);
    }
    if (sessionId !== undefined && this.statements.liveSession.get({ id: sessionId, now }) === undefined) {
      throw sessionExpired(sessionId);
    }
    const version = (live?.version ?? 0) + 1;
    this.statements.upsertNode.run({
      parent: parts.parent,
      name: parts.name,
      value: Buffer.from(value.buffer, value.byteOffset, value.byteLength),
      version,
      createdAtMs: live?.created_at_ms ?? now,
      now,
      sessionId: sessionId ?? null,
    });
    return { path: parts.path, kind: live === undefined ? 'created' : 'modified', version };
  }

  private applyDelete(parts: PathParts, expected: number | undefined): MetadataChange | undefined {
    const row = this.statements.getNode.get({ parent: parts.parent, name: parts.name, now: Date.now() });
    const live = row?.live === 1 ? row : undefined;
    if (expected !== undefined && live?.version !== expected) {
      throw badVersion(parts.path, String(expected), live?.version);
    }
    if (row === undefined) return undefined;
    // Removing a stored node is announced even when its session had already ended: nothing else will announce it.
    this.statements.deleteNode.run({ parent: parts.parent, name: parts.name });
    return { path: parts.path, kind: 'deleted', version: 0 };
  }

  private renewSession(id: string, ttlMs: number): boolean {
    const now = Date.now();
    return this.statements.renewSession.run({ id, expiresAtMs: now + ttlMs, now }).changes === 1;
  }

  // Deletes a session row and its ephemeral nodes in one transaction, then announces each deletion.
  private async removeSession(id: string): Promise<void> {
    const removed = await this.write(() => {
      const nodes = this.statements.sessionNodes.all(id);
      this.statements.deleteSessionNodes.run(id);
      this.statements.deleteSession.run(id);
      return nodes;
    });
    await this.publisher.publishAll(
      removed.map(({ parent, name }) => ({ path: joinPath(parent, name), kind: 'deleted' as const, version: 0 })),
    );
  }

  private ownSessionId(session: MetadataSession | undefined): string | undefined {
    if (session === undefined) return undefined;
    if (this.sessions.get(session.id) !== session) {
      if (session instanceof StoreSession && session.expired) throw sessionExpired(session.id);
      throw foreignSession();
    }
    if (session.expired) throw sessionExpired(session.id);
    return session.id;
  }

  /** Queues a write for the next group commit (see groupCommit). */
  private write<T>(apply: () => T): Promise<T> {
    if (this.closed) return Promise.reject(storeClosed());
    return this.writes.submit(apply);
  }

  /** Runs a read; in WAL mode it waits only while another process recovers the log, on timers, up to busyTimeoutMs. */
  private async query<T>(action: () => T): Promise<T> {
    const deadline = Date.now() + this.busyTimeoutMs;
    for (;;) {
      if (this.closed) throw storeClosed();
      try {
        return action();
      } catch (error) {
        if (!isSqliteBusy(error) || Date.now() >= deadline) throw mapSqliteError(error);
      }
      await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
    }
  }
}

function openDatabase(path: string | undefined): Database.Database {
  if (typeof path !== 'string' || path.length === 0) {
    throw invalidArgument(ErrorReason.INVALID_CONFIG, 'the SQLite metadata store needs a file path');
  }
  try {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    return new Database(path);
  } catch (error) {
    throw mapSqliteError(error);
  }
}

function resolveBusyTimeout(busyTimeoutMs: number | undefined): number {
  const value = busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw invalidArgument(
      ErrorReason.INVALID_CONFIG,
      `busyTimeoutMs must be a non-negative integer, got ${String(value)}`,
    );
  }
  return value;
}

function toVersionedValue(row: NodeRow): VersionedValue {
  const result: VersionedValue = {
    value: new Uint8Array(row.value.buffer, row.value.byteOffset, row.value.byteLength),
    version: row.version,
    createdAtMs: row.created_at_ms,
    modifiedAtMs: row.modified_at_ms,
  };
  if (row.session_id !== null) result.ephemeralSessionId = row.session_id;
  return result;
}
