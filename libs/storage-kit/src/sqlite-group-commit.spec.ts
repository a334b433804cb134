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
const values = () => (db.prepare('SELECT v FROM t ORDER BY rowid').all() as { v: number }[]).map((row) => row.v);

it('commits the writes of one turn in one transaction, in order, and rolls a failed one back alone', async () => {
  const queue = sqliteGroupCommit(db, { busyTimeoutMs: 1_000, maxWaiting: 100, maxPerTransaction: 100, refuse });
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

it('starts another transaction past maxPerTransaction writes', async () => {
  const queue = sqliteGroupCommit(db, { busyTimeoutMs: 1_000, maxWaiting: 100, maxPerTransaction: 2, refuse });
  const transactions = jest.spyOn(db, 'transaction');
  await Promise.all([1, 2, 3, 4, 5].map((v) => queue.submit(insert(v))));
  expect(values()).toEqual([1, 2, 3, 4, 5]);
  expect(transactions).toHaveBeenCalledTimes(3);
});
