import Database from 'better-sqlite3';
import { ErrorReason, LedgerlineError } from '@ledgerline/errors';
import { sqliteGroupCommit } from './sqlite-group-commit.js';

/*
 * Group commit as both SQLite stores use it: the writes of one turn share one
 * transaction, and one that throws rolls back alone.
 */

let db: Database.Database;
beforeEach(() => {
  db = new Database(':memory:');
  db.exec('CREATE TABLE t (v INTEGER)');
});
afterEach(() => db.close());

const refuse = () => new LedgerlineError('UNAVAILABLE', ErrorReason.STORE_UNAVAILABLE, 'too many waiting');
const insert = (v: number) => () => db.prepare('INSERT INTO t (v) VALUES (?)').run(v).changes;
/** The group commit as the spec builds it: generous bounds, and `overrides` for what a case is about. */
const groupCommit = (overrides: Partial<Parameters<typeof sqliteGroupCommit>[1]> = {}) =>
  sqliteGroupCommit(db, { busyTimeoutMs: 1_000, maxWaiting: 100, maxPerTransaction: 100, refuse, ...overrides });
const values = () => (db.prepare('SELECT v FROM t ORDER BY rowid').all() as { v: number }[]).map((row) => row.v);

it('commits the writes of one turn in one transaction, in order, and rolls a failed one back alone', async () => {
  const queue = groupCommit();
  // Counted after the queue is built: it makes one transaction function up front, for the savepoints.
  const transactions = jest.spyOn(db, 'transaction');
  const failing = () => {
    insert(99)();
    throw new Error('refused after writing');
  };
  const outcomes = await Promise.allSettled([queue.submit(insert(1)), queue.submit(failing), queue.submit(insert(2))]);
  expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  expect(values()).toEqual([1, 2]);
  expect(transactions).toHaveBeenCalledTimes(1);
});

it('fails the whole batch, applying nothing after it, when SQLite rolls the transaction back mid-batch', async () => {
  const queue = groupCommit();
  // As SQLite does itself on a full disk or an I/O error: the transaction, not only the savepoint, is gone.
  const rolledBack = () => {
    db.exec('ROLLBACK');
    throw new Error('disk I/O error');
  };
  const outcomes = await Promise.allSettled([
    queue.submit(insert(1)),
    queue.submit(rolledBack),
    queue.submit(insert(2)),
  ]);
  expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected']);
  expect(values()).toEqual([]);
  expect(db.inTransaction).toBe(false);
  // The queue goes on: the next batch commits.
  await queue.submit(insert(3));
  expect(values()).toEqual([3]);
});

it('starts another transaction past maxPerTransaction writes', async () => {
  const queue = groupCommit({ maxPerTransaction: 2 });
  const transactions = jest.spyOn(db, 'transaction');
  await Promise.all([1, 2, 3, 4, 5].map((v) => queue.submit(insert(v))));
  expect(values()).toEqual([1, 2, 3, 4, 5]);
  expect(transactions).toHaveBeenCalledTimes(3);
});

it('with end-of-tick, commits what one run of callbacks submitted right after it, and a later run apart', async () => {
  const queue = groupCommit({ start: 'end-of-tick' });
  const transactions = jest.spyOn(db, 'transaction');
  // Queued before the writes: with 'next-turn' it would run before their transaction and find no row.
  const seenNextTurn = new Promise<number[]>((resolve) => setImmediate(() => resolve(values())));
  const first = Promise.all([queue.submit(insert(1)), queue.submit(insert(2))]);
  await first;
  expect(await seenNextTurn).toEqual([1, 2]);
  await new Promise<void>((resolve) => setImmediate(resolve));
  await queue.submit(insert(3));
  expect(values()).toEqual([1, 2, 3]);
  expect(transactions).toHaveBeenCalledTimes(2);
});

it('with end-of-tick, runs at flush the writes that wait for the end of their run, so a read then sees them', async () => {
  const queue = groupCommit({ maxPerTransaction: 1, start: 'end-of-tick' });
  const written = Promise.all([queue.submit(insert(1)), queue.submit(insert(2))]);
  expect(values()).toEqual([]);
  // Both, though one transaction holds one write here: a read after them must see every one.
  queue.flush();
  expect(values()).toEqual([1, 2]);
  await written;
});

it.each(['drainNow', 'abort'] as const)(
  'with end-of-tick, %s while the end of the run is awaited clears no immediate it did not set',
  async (stop) => {
    const queue = groupCommit({ start: 'end-of-tick' });
    // Node's clearImmediate takes any object and counts it off the process's immediates: one too few, and a lone
    // setImmediate never runs again in the process (a store closed so hung every later test of its Jest worker).
    // The spy passes on only real immediates, so a wrong call fails this test rather than hang the worker.
    const Immediate = setImmediate(() => undefined).constructor;
    const clear = globalThis.clearImmediate;
    const cleared = jest.spyOn(globalThis, 'clearImmediate').mockImplementation((handle) => {
      if (handle instanceof Immediate) clear(handle);
    });
    let handles: unknown[];
    try {
      const written = queue.submit(insert(1)).catch(() => 'aborted');
      queue[stop](new Error('closed'));
      await written;
    } finally {
      handles = cleared.mock.calls.map(([handle]) => handle);
      cleared.mockRestore();
    }
    expect(handles.filter((handle) => !(handle instanceof Immediate))).toEqual([]);
    expect(values()).toEqual(stop === 'drainNow' ? [1] : []);
  },
);
