import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { invalidArgument, ErrorReason, LedgerlineError } from '@ledgerline/errors';
import { asBytes } from './bytes.js';
import { entryNotConfirmed, ledgerNotFound, storeClosed, storeCorrupt } from './errors.js';
import { notifyLacAdvanced } from './lac-hook.js';
import { StoreLedgerWriter, type WriterBackend } from './ledger-writer.js';
import {
  backgroundErrors,
  BackgroundErrorKind,
  DEFAULT_SQLITE_SYNCHRONOUS,
  LOCK_ATTEMPT_MS,
  readWithLockWait,
  sqliteGroupCommit,
  startSqliteCheckpointer,
  type SqliteCheckpointer,
  type SqliteSynchronous,
  type StorageErrorOptions,
} from '@ledgerline/storage-kit';
import { fromSqliteError, prepareDatabase } from './sqlite-schema.js';
import { ledgerWritesOn, refusalError, type LedgerWrite } from './sqlite-ledger-writes.js';
import { SqliteWriterThread } from './sqlite-writer-thread.js';

/** Writes one store lets wait for the write lock at once; more fail UNAVAILABLE at once. */
export const MAX_WAITING_WRITES = 10_000;
/**
 * Writes one transaction holds at most: the appends of every topic in one turn
 * share a commit (one WAL sync); a turn with more writes than this commits more than once.
 */
export const MAX_WRITES_PER_TRANSACTION = 1_000;
import type {
  CreateLedgerOptions,
  LedgerEntry,
  LedgerInfo,
  LedgerState,
  LedgerStore,
  LedgerStoreLimits,
  LedgerStoreOptions,
  LedgerWriter,
} from './store.js';
import {
  decodeOwnerTags,
  encodeOwnerTags,
  resolveLimits,
  validateAppend,
  validateLedgerBatch,
  validateLedgerId,
  validateListOptions,
  validateReadRange,
} from './validate.js';

export interface SqliteLedgerStoreOptions extends LedgerStoreOptions, StorageErrorOptions {
  /** The database file (created if missing), or ':memory:' for a private in-memory store. */
  path: string;
  /**
   * 'FULL' (default) syncs the WAL on every commit, so an acknowledged append
   * survives power loss; 'NORMAL' survives a process crash only, and is faster.
   */
  synchronous?: SqliteSynchronous;
  /**
   * How long a call waits for a lock another connection (another process)
   * holds before it fails UNAVAILABLE / STORE_UNAVAILABLE; default 2000 ms.
   * The wait runs on timers, so the event loop keeps serving meanwhile.
   */
  busyTimeoutMs?: number;
  /**
   * Whether writes commit on a thread of their own (default true for a file):
   * inserts, commits and WAL syncs then never hold the event loop. An
   * in-memory store always commits on the event loop (its one connection
   * holds the data).
   */
  writerThread?: boolean;
}

/** Where the store's writes run: on a thread of their own, or on this thread's connection. */
interface LedgerWriteQueue {
  submit(write: LedgerWrite): Promise<unknown>;
  /** Resolves once the writes submitted so far are applied; undefined when they already are. */
  settled(): Promise<void> | undefined;
  /** Runs what was submitted, then stops. */
  close(): Promise<void>;
}

interface LedgerRow {
  id: number;
  state: LedgerState;
  fenced: 0 | 1;
  lac: number;
  size: number;
  owner_tags: string;
  created_at: number;
}

const DEFAULT_BUSY_TIMEOUT_MS = 2_000;

/**
 * The embedded ledger store: one SQLite file in WAL mode. Every write is
 * atomic: the writes submitted in one run of a callback and its microtasks
 * (the appends of every managed ledger that wrote in the turn, which resume
 * together; creates, fences) run in call order in one IMMEDIATE transaction,
 * each in its own savepoint, so one that fails (a fenced ledger) rolls back
 * alone and the rest share one commit and one WAL sync. For a file they run
 * on a writer thread with a connection of its own (sqlite-writer-thread.ts),
 * off the event loop; in memory, on this thread (storage-kit's
 * sqliteGroupCommit). A read waits for the writes called before it, so it
 * sees them. Writes wait for another process's lock on timers. Ids come from
 * the stored LAC, never from memory, so several stores (or processes) may
 * open the same file.
 */
export class SqliteLedgerStore implements LedgerStore {
  private readonly db: Database.Database;
  private readonly limits: LedgerStoreLimits;
  private readonly onLacAdvanced: LedgerStoreOptions['onLacAdvanced'];
  private readonly sql: ReturnType<typeof prepareStatements>;
  private readonly writes: LedgerWriteQueue;
  /** WAL checkpoints run on a thread of their own, not inside a commit on the event loop. */
  private readonly checkpointer: SqliteCheckpointer;
  private readonly busyTimeoutMs: number;
  private closed = false;
  /** What writers call: appends and the writer's own close are reachable only through a writer. */
  private readonly writerBackend: WriterBackend = {
    // Writes apply in call order here (SqliteLockQueue), so the call number is not needed.
    appendEntries: (ledgerId, entries) => this.appendEntries(ledgerId, entries),
    closeByWriter: (ledgerId) => this.closeByWriter(ledgerId),
  };

  constructor(options: SqliteLedgerStoreOptions) {
    if (typeof options?.path !== 'string' || options.path === '') {
      throw invalidArgument(ErrorReason.INVALID_CONFIG, 'the sqlite ledger store needs a file path (or :memory:)');
    }
    this.limits = resolveLimits(options.limits);
    this.onLacAdvanced = options.onLacAdvanced;
    this.busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
    if (!Number.isSafeInteger(this.busyTimeoutMs) || this.busyTimeoutMs < 0) {
      throw invalidArgument(
        ErrorReason.INVALID_CONFIG,
        `busyTimeoutMs must be a non-negative integer, got ${this.busyTimeoutMs}`,
      );
    }
    try {
      // Standalone mode points at ./data/... on first start: create the folder rather than fail.
      if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });
      this.db = new Database(options.path);
      prepareDatabase(this.db, options.synchronous ?? DEFAULT_SQLITE_SYNCHRONOUS, this.busyTimeoutMs);
      // From here on lock waits run on timers (see SqliteLockQueue); SQLite only polls briefly.
      this.db.pragma(`busy_timeout = ${Math.min(LOCK_ATTEMPT_MS, this.busyTimeoutMs)}`);
    } catch (thrown) {
      throw fromSqliteError(thrown);
    }
    this.sql = prepareStatements(this.db);
    const refuse = () =>
      new LedgerlineError(
        'UNAVAILABLE',
        ErrorReason.STORE_UNAVAILABLE,
        `${MAX_WAITING_WRITES} writes already wait for the ledger file's writer (its disk, or a write lock another process holds)`,
      );
    const errors = backgroundErrors('ledger-store', options);
    const onError = (error: Error) => errors.report(BackgroundErrorKind.WAL_CHECKPOINT, error);
    if (this.db.memory || options.writerThread === false) {
      this.writes = writesOnThisThread(this.db, this.busyTimeoutMs, refuse);
      this.checkpointer = startSqliteCheckpointer(this.db, { onError });
    } else {
      const thread = new SqliteWriterThread({
        path: this.db.name,
        synchronous: options.synchronous ?? DEFAULT_SQLITE_SYNCHRONOUS,
        busyTimeoutMs: this.busyTimeoutMs,
        maxPerTransaction: MAX_WRITES_PER_TRANSACTION,
        maxWaiting: MAX_WAITING_WRITES,
        refuse,
        onStopped: (error) => errors.report(BackgroundErrorKind.WRITER_THREAD, error),
      });
      this.writes = thread;
      // The checkpointer moves the inline checkpoints of the connection that writes: the thread's.
      const isOpen = () => !this.closed;
      this.checkpointer = startSqliteCheckpointer(
        {
          memory: false,
          name: this.db.name,
          get open() {
            return isOpen();
          },
          pragma: (source) => thread.pragma(source),
        },
        { onError },
      );
    }
  }

  async create(ledgerId: number, options: CreateLedgerOptions = {}): Promise<LedgerWriter> {
    validateLedgerId(ledgerId);
    const ownerTags = encodeOwnerTags(options?.ownerTags);
    await this.write({ kind: 'create', ledgerId, ownerTags, createdAtMs: Date.now() });
    return new StoreLedgerWriter(ledgerId, this.writerBackend);
  }

  private async appendEntries(ledgerId: number, entries: Uint8Array[]): Promise<number> {
    validateLedgerId(ledgerId);
    const totalBytes = validateAppend(entries, this.limits);
    const firstEntryId = (await this.write({ kind: 'append', ledgerId, entries, totalBytes })) as number;
    notifyLacAdvanced(this.onLacAdvanced, ledgerId, firstEntryId + entries.length - 1);
    return firstEntryId;
  }

  private async closeByWriter(ledgerId: number): Promise<number> {
    validateLedgerId(ledgerId);
    return (await this.write({ kind: 'closeByWriter', ledgerId })) as number;
  }

  async fence(ledgerId: number): Promise<number> {
    validateLedgerId(ledgerId);
    return (await this.write({ kind: 'fence', ledgerId })) as number;
  }

  async closeLedger(ledgerId: number): Promise<number> {
    validateLedgerId(ledgerId);
    return (await this.write({ kind: 'closeLedger', ledgerId })) as number;
  }

  async read(ledgerId: number, firstEntryId: number, lastEntryId: number): Promise<LedgerEntry[]> {
    validateLedgerId(ledgerId);
    const count = validateReadRange(firstEntryId, lastEntryId, this.limits);
    return this.query(() =>
      this.db.transaction(() => {
        const row = this.requireLedger(ledgerId);
        if (lastEntryId > row.lac) throw entryNotConfirmed(ledgerId, lastEntryId, row.lac);
        const rows = this.sql.selectEntries.all(ledgerId, firstEntryId, lastEntryId) as {
          entry_id: number;
          data: Buffer;
        }[];
        if (rows.length !== count) {
          throw storeCorrupt(`ledger ${ledgerId} is missing entries between ${firstEntryId} and ${lastEntryId}`);
        }
        return rows.map((r) => ({ entryId: r.entry_id, data: asBytes(r.data) }));
      })(),
    );
  }

  async lastAddConfirmed(ledgerId: number): Promise<number> {
    validateLedgerId(ledgerId);
    return this.query(() => this.requireLedger(ledgerId).lac);
  }

  async info(ledgerId: number): Promise<LedgerInfo | undefined> {
    validateLedgerId(ledgerId);
    const row = await this.query(() => this.sql.selectLedger.get(ledgerId) as LedgerRow | undefined);
    return row === undefined ? undefined : toInfo(row);
  }

  async delete(ledgerId: number): Promise<void> {
    validateLedgerId(ledgerId);
    await this.write({ kind: 'delete', ledgerId });
  }

  async infoMany(ledgerIds: readonly number[]): Promise<PromiseSettledResult<LedgerInfo | undefined>[]> {
    const ids = validateLedgerBatch(ledgerIds);
    const rows = await this.query(() => ids.map((id) => this.sql.selectLedger.get(id) as LedgerRow | undefined));
    return rows.map((row) => {
      try {
        return { status: 'fulfilled', value: row === undefined ? undefined : toInfo(row) };
      } catch (reason) {
        return { status: 'rejected', reason };
      }
    });
  }

  /** One transaction: every ledger of the batch goes, or (the call rejects) none does. */
  async deleteMany(ledgerIds: readonly number[]): Promise<PromiseSettledResult<void>[]> {
    const ids = validateLedgerBatch(ledgerIds);
    if (ids.length > 0) await this.write({ kind: 'deleteMany', ledgerIds: ids });
    return ids.map(() => ({ status: 'fulfilled', value: undefined }));
  }

  async list(options?: { after?: number; limit?: number }): Promise<{ ledgerIds: number[]; next?: number }> {
    const { after, limit } = validateListOptions(options);
    const rows = await this.query(() => this.sql.listLedgers.all(after, limit + 1) as { id: number }[]);
    const ledgerIds = rows.slice(0, limit).map((r) => r.id);
    return rows.length > limit ? { ledgerIds, next: ledgerIds[ledgerIds.length - 1]! } : { ledgerIds };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Writes submitted before close run (they were accepted); one held back by another process's lock fails.
    await this.writes.close();
    // Its connection closes first: the writer's, then the last, folds the log into the file and removes it.
    await this.checkpointer.close();
    this.db.close();
  }

  private requireLedger(ledgerId: number): LedgerRow {
    const row = this.sql.selectLedger.get(ledgerId) as LedgerRow | undefined;
    if (row === undefined) throw ledgerNotFound(ledgerId);
    return row;
  }

  /**
   * Runs `write` in the run's transaction, in its own savepoint, in call
   * order, refusing after close and mapping SQLite failures.
   */
  private async write(write: LedgerWrite): Promise<unknown> {
    if (this.closed) throw storeClosed('sqlite');
    try {
      return await this.writes.submit(write);
    } catch (thrown) {
      throw refusalError(thrown) ?? fromSqliteError(thrown);
    }
  }

  /**
   * Runs a read, refusing after close and mapping SQLite failures. The writes
   * submitted before it go first, so a read sees every write called before
   * it, settled or not, as each Redis command sees those sent before it on
   * the connection (a write not yet awaited, such as the delete of a ledger
   * nothing names, would otherwise stay unapplied while a run of synchronous
   * reads goes on).
   */
  private async query<T>(call: () => T): Promise<T> {
    if (this.closed) throw storeClosed('sqlite');
    try {
      const writesBefore = this.writes.settled();
      if (writesBefore !== undefined) await writesBefore;
      return await readWithLockWait(call, this.busyTimeoutMs);
    } catch (thrown) {
      throw fromSqliteError(thrown);
    }
  }
}

function prepareStatements(db: Database.Database) {
  return {
    selectLedger: db.prepare('SELECT * FROM ledgers WHERE id = ?'),
    selectEntries: db.prepare(
      'SELECT entry_id, data FROM entries WHERE ledger_id = ? AND entry_id BETWEEN ? AND ? ORDER BY entry_id',
    ),
    listLedgers: db.prepare('SELECT id FROM ledgers WHERE id > ? ORDER BY id LIMIT ?'),
  };
}

function toInfo(row: LedgerRow): LedgerInfo {
  const ownerTags = decodeOwnerTags(row.owner_tags);
  if (ownerTags === undefined) throw storeCorrupt(`ledger ${row.id} has unreadable owner tags`);
  return {
    ledgerId: row.id,
    state: row.state,
    lastAddConfirmed: row.lac,
    sizeBytes: row.size,
    ownerTags,
    createdAtMs: row.created_at,
  };
}

/** The writes on this thread's connection: storage-kit's group commit over the shared write bodies. */
function writesOnThisThread(
  db: Database.Database,
  busyTimeoutMs: number,
  refuse: () => LedgerlineError,
): LedgerWriteQueue {
  const apply = ledgerWritesOn(db);
  const queue = sqliteGroupCommit(db, {
    busyTimeoutMs,
    maxWaiting: MAX_WAITING_WRITES,
    maxPerTransaction: MAX_WRITES_PER_TRANSACTION,
    // The managed ledgers issue their writes from one shared turn (their group commit): the transaction runs
    // right after, rather than one more turn later.
    start: 'end-of-tick',
    refuse,
  });
  return {
    submit: (write) => queue.submit(() => apply(write)),
    settled: () => {
      queue.flush();
      return undefined;
    },
    close: () => {
      queue.drainNow();
      return Promise.resolve();
    },
  };
}
