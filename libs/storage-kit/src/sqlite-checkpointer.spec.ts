import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INLINE_CHECKPOINT_PAGES, startSqliteCheckpointer, type SqliteCheckpointer } from './sqlite-checkpointer.js';
import { isSqliteBusy, LOCK_ATTEMPT_MS, LOCK_RETRY_MS } from './sqlite-lock-queue.js';

const PAGE_BYTES = 4096;
const ROW_BYTES = 1024;

/** Resolves once `done` holds, checking every 10 ms; fails after `timeoutMs`. */
async function until(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('startSqliteCheckpointer', () => {
  let dir: string;
  let db: Database.Database;
  let checkpointer: SqliteCheckpointer | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-checkpointer-'));
    db = new Database(join(dir, 'store.db'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('CREATE TABLE rows (id INTEGER PRIMARY KEY, data BLOB NOT NULL)');
  });

  afterEach(async () => {
    await checkpointer?.close();
    if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const write = (rows: number) => {
    const insert = db.prepare('INSERT INTO rows (data) VALUES (?)');
    const payload = Buffer.alloc(ROW_BYTES, 1);
    for (let i = 0; i < rows; i++) insert.run(payload);
  };
  const databaseBytes = () => statSync(join(dir, 'store.db')).size;

  it("moves what the writer commits into the database file from its own thread, never in the writer's commits", async () => {
    checkpointer = startSqliteCheckpointer(db, { intervalMs: 20, startAfterMs: 0 });
    await until(() => checkpointer!.checkpoints > 0, 10_000, 'the first checkpoint');
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(INLINE_CHECKPOINT_PAGES);
    const before = databaseBytes();
    // 3,000 rows of 1 KiB: about 800 pages, below the writer's own threshold, so only the thread can move them.
    write(3_000);
    await until(() => databaseBytes() >= before + 3_000 * ROW_BYTES, 10_000, 'the rows reaching the database file');
    expect(db.prepare('SELECT count(*) AS n FROM rows').get()).toEqual({ n: 3_000 });
  });

  it('starts the log over while the writer never pauses for it, so the log stays near 16 MB', async () => {
    checkpointer = startSqliteCheckpointer(db, { startAfterMs: 0 });
    await until(() => checkpointer!.checkpoints > 0, 10_000, 'the first checkpoint');
    db.pragma(`busy_timeout = ${LOCK_ATTEMPT_MS}`);
    const insert = db.prepare('INSERT INTO rows (data) VALUES (?)');
    const payload = Buffer.alloc(ROW_BYTES, 1);
    const commit = db.transaction(() => {
      for (let i = 0; i < 16; i++) insert.run(payload);
    });
    // 20,000 rows, 16 a transaction, a transaction every millisecond or so (a store under steady load): about
    // 40 MB of log frames. A log that never starts over would hold them all (it only does when a writer finds it
    // wholly copied, which this writer never leaves time for).
    for (let written = 0; written < 20_000; written += 16) {
      for (;;) {
        try {
          commit();
          break;
        } catch (thrown) {
          // The RESTART holds writers off: wait on a timer, as the stores' lock queue does.
          if (!isSqliteBusy(thrown)) throw thrown;
          await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    // About 18 MB here (4,096 frames and what came while the RESTART waited); without the RESTART, about 42 MB.
    expect(statSync(join(dir, 'store.db-wal')).size).toBeLessThan(32 * 1024 * 1024);
    expect(db.prepare('SELECT count(*) AS n FROM rows').get()).toEqual({ n: 20_000 });
  }, 60_000);

  it('leaves the pages in the log while it is not running: the same writes without it stay out of the file', async () => {
    checkpointer = startSqliteCheckpointer(db, { intervalMs: 20, startAfterMs: 60_000 });
    db.pragma(`wal_autocheckpoint = ${INLINE_CHECKPOINT_PAGES}`);
    const before = databaseBytes();
    write(3_000);
    expect(databaseBytes()).toBeLessThan(before + PAGE_BYTES * 4);
  });

  it("closes its connection on close, so the writer's close, the last one, removes the log", async () => {
    checkpointer = startSqliteCheckpointer(db, { intervalMs: 20, startAfterMs: 0 });
    await until(() => checkpointer!.checkpoints > 0, 10_000, 'the first checkpoint');
    write(100);
    await checkpointer.close();
    db.close();
    expect(existsSync(join(dir, 'store.db-wal'))).toBe(false);
    const reopened = new Database(join(dir, 'store.db'));
    expect(reopened.prepare('SELECT count(*) AS n FROM rows').get()).toEqual({ n: 100 });
    reopened.close();
  });

  it('starts no thread for a store closed before its start, nor for an in-memory database', async () => {
    checkpointer = startSqliteCheckpointer(db, { startAfterMs: 50 });
    await checkpointer.close();
    expect(checkpointer.checkpoints).toBe(0);
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    const memory = new Database(':memory:');
    const none = startSqliteCheckpointer(memory, { startAfterMs: 0 });
    await none.close();
    expect(none.checkpoints).toBe(0);
    memory.close();
  });
});
