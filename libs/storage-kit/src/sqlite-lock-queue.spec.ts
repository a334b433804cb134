import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ErrorReason, LedgerlineError } from '@ledgerline/errors';
import { LOCK_ATTEMPT_MS, SqliteLockQueue, isSqliteBusy, readWithLockWait } from './sqlite-lock-queue.js';

describe('SqliteLockQueue', () => {
  let dir: string;
  let mine: Database.Database;
  let other: Database.Database;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'storage-kit-'));
    const path = join(dir, 'queue.db');
    mine = new Database(path);
    mine.pragma('journal_mode = WAL');
    mine.pragma(`busy_timeout = ${LOCK_ATTEMPT_MS}`);
    mine.exec('CREATE TABLE t (v INTEGER)');
    other = new Database(path);
    other.pragma(`busy_timeout = ${LOCK_ATTEMPT_MS}`);
  });

  afterEach(() => {
    mine.close();
    other.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const refuse = () => new LedgerlineError('UNAVAILABLE', ErrorReason.STORE_UNAVAILABLE, 'too many waiting');
  const oneByOne = (maxWaiting = 100, busyTimeoutMs = 5_000) =>
    new SqliteLockQueue((bodies) => [{ ok: true, value: mine.transaction(bodies[0]!).immediate() }], {
      busyTimeoutMs,
      maxWaiting,
      maxPerTransaction: 1,
      start: 'now',
      refuse,
    });
  const insert = (v: number) => () => mine.prepare('INSERT INTO t (v) VALUES (?)').run(v).changes;
  const values = () =>
    mine
      .prepare('SELECT v FROM t ORDER BY rowid')
      .all()
      .map((row) => (row as { v: number }).v);

  it('runs a write at once when the lock is free', async () => {
    await expect(oneByOne().submit(insert(1))).resolves.toBe(1);
    expect(values()).toEqual([1]);
  });

  it('waits on timers while another connection holds the lock, then writes in submission order', async () => {
    other.exec('BEGIN IMMEDIATE');
    const queue = oneByOne();
    const writes = [queue.submit(insert(1)), queue.submit(insert(2)), queue.submit(insert(3))];
    // The event loop keeps turning while the writes wait on the other connection's lock.
    await new Promise((resolve) => setImmediate(resolve));
    expect(queue.size).toBe(3);
    other.exec('COMMIT');
    await Promise.all(writes);
    expect(values()).toEqual([1, 2, 3]);
  });

  it('leaves a write that waits for another connection queued at flush', async () => {
    other.exec('BEGIN IMMEDIATE');
    const queue = oneByOne();
    const written = queue.submit(insert(1));
    queue.flush();
    expect(queue.size).toBe(1);
    other.exec('COMMIT');
    await written;
    expect(values()).toEqual([1]);
  });

  it('fails a write with the busy error once it has waited busyTimeoutMs', async () => {
    other.exec('BEGIN IMMEDIATE');
    const failure = await oneByOne(100, 20)
      .submit(insert(1))
      .catch((error: unknown) => error);
    other.exec('ROLLBACK');
    expect(isSqliteBusy(failure)).toBe(true);
    expect(values()).toEqual([]);
  });

  it('refuses a write past maxWaiting with the given error', async () => {
    other.exec('BEGIN IMMEDIATE');
    const queue = oneByOne(1);
    const waiting = queue.submit(insert(1));
    await expect(queue.submit(insert(2))).rejects.toMatchObject({ reason: ErrorReason.STORE_UNAVAILABLE });
    other.exec('COMMIT');
    await waiting;
    expect(values()).toEqual([1]);
  });

  it('rejects only the write that threw, and goes on with the next', async () => {
    const queue = oneByOne();
    const bad = queue.submit(() => {
      throw new Error('no such thing');
    });
    const good = queue.submit(insert(7));
    await expect(bad).rejects.toThrow('no such thing');
    await expect(good).resolves.toBe(1);
  });

  it('groups the writes of one event-loop turn into one transaction', async () => {
    const batches: number[] = [];
    const queue = new SqliteLockQueue(
      (bodies) => {
        batches.push(bodies.length);
        return mine.transaction(() => bodies.map((body) => ({ ok: true as const, value: body() })))();
      },
      { busyTimeoutMs: 1_000, maxWaiting: 100, maxPerTransaction: 2, start: 'next-turn', refuse },
    );
    await Promise.all([1, 2, 3, 4, 5].map((v) => queue.submit(insert(v))));
    expect(batches).toEqual([2, 2, 1]);
    expect(values()).toEqual([1, 2, 3, 4, 5]);
  });

  it('abort fails every waiting write', async () => {
    other.exec('BEGIN IMMEDIATE');
    const queue = oneByOne();
    const waiting = queue.submit(insert(1));
    queue.abort(new Error('closed'));
    await expect(waiting).rejects.toThrow('closed');
    other.exec('ROLLBACK');
  });
});

describe('readWithLockWait', () => {
  it('retries a busy read until it succeeds', async () => {
    let attempts = 0;
    const read = () => {
      attempts += 1;
      if (attempts < 3) throw Object.assign(new Error('busy'), { code: 'SQLITE_BUSY_RECOVERY' });
      return 'row';
    };
    await expect(readWithLockWait(read, 1_000)).resolves.toBe('row');
    expect(attempts).toBe(3);
  });

  it('lets any other failure through at once', async () => {
    const read = () => {
      throw Object.assign(new Error('corrupt'), { code: 'SQLITE_CORRUPT' });
    };
    await expect(readWithLockWait(read, 1_000)).rejects.toThrow('corrupt');
  });
});
