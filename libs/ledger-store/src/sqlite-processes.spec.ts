import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LedgerlineError } from '@ledgerline/errors';
import { expectFailure, taggedEntry } from './testing/conformance-support.js';
import { LedgerStoreReason as R } from './errors.js';
import { checkFencingHistory, readAll, type AppendRecord, type FencingHistory } from './testing/fencing-history.js';
import { SqliteLedgerStore } from './sqlite-store.js';
import { DEFAULT_MAX_READ_ENTRIES } from './store.js';
import { WorkerProcess, type WorkerLine } from '@ledgerline/testing';

/*
 * Two processes on one SQLite ledger file, the standalone deployment's real
 * sharing case: fencing and creates must hold across processes, a lock held
 * by the other process must end in UNAVAILABLE after busyTimeoutMs (never
 * INTERNAL, never damage), and a process killed mid-transaction must leave a
 * sound file holding every append it acknowledged.
 */

const WORKER = join(__dirname, 'testing', 'sqlite-worker.ts');
const dir = mkdtempSync(join(tmpdir(), 'ledger-store-processes-'));
const workers: WorkerProcess[] = [];
let nextFile = 0;

function startWorker(args: object): WorkerProcess {
  const worker = new WorkerProcess(WORKER, args);
  workers.push(worker);
  return worker;
}

afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.kill()));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const freshPath = () => join(dir, `ledgers-${nextFile++}.db`);
const acks = (lines: WorkerLine[]) => lines.filter((line) => typeof line['first'] === 'number').length;

/** The worker's append lines as the history the fencing model checks, plus calls it may have made unreported. */
function historyOf(lines: WorkerLine[], fencedLac: number, entryBytes: number): FencingHistory {
  const records: AppendRecord[] = lines
    .filter((line) => typeof line['call'] === 'number')
    .map((line) => ({
      call: line['call'] as number,
      entries: batch(line['call'] as number, entryBytes),
      issuedAfterFence: line['afterFence'] === true,
      outcome:
        typeof line['first'] === 'number'
          ? { ok: true as const, firstEntryId: line['first'] }
          : { ok: false as const, code: String(line['code']), reason: String(line['reason']) },
    }));
  // A killed worker may have made calls it never reported: each one's outcome is unknown.
  const lastCall = records.length === 0 ? -1 : records[records.length - 1]!.call;
  for (let call = lastCall + 1; call <= lastCall + 5; call++) {
    records.push({
      call,
      entries: batch(call, entryBytes),
      issuedAfterFence: false,
      outcome: { ok: false, code: 'UNAVAILABLE', reason: 'UNREPORTED' },
    });
  }
  return { records, fencedLac, fenceRetries: 0 };
}

/** The batch the worker appends as call `call` (see testing/sqlite-worker.ts). */
function batch(call: number, entryBytes: number): Uint8Array[] {
  return Array.from({ length: 1 + (call % 7) }, (_, k) => taggedEntry(call, k, entryBytes));
}

it('fences a writer in another process: nothing acknowledged is lost, nothing issued after the fence lands', async () => {
  const path = freshPath();
  const store = new SqliteLedgerStore({ path });
  const worker = startWorker({ mode: 'append', file: path, ledgerId: 1, entryBytes: 256 });
  await worker.waitFor((lines) => acks(lines) >= 30);
  // This process appends to its own ledger meanwhile: the two contend for the one write lock, and
  // neither may starve the other (SQLite's own lock wait backs off and lost this race now and then).
  const own = await store.create(2);
  for (let i = 0; i < 200; i++) expect(await own.append([taggedEntry(i, 0)])).toBe(i);
  const fencedLac = await store.fence(1);
  worker.send('fenced');
  expect(await worker.exited).toBe(0);

  const history = historyOf(worker.lines, fencedLac, 256);
  const finalLac = await store.lastAddConfirmed(1);
  const stored = await readAll(store, 1, finalLac, DEFAULT_MAX_READ_ENTRIES);
  expect(checkFencingHistory(history, finalLac, stored).problems).toEqual([]);
  const calls = worker.lines.filter((line) => typeof line['call'] === 'number');
  expect(calls[calls.length - 1]).toMatchObject({ afterFence: true, code: 'ABORTED', reason: R.ledgerFenced });
  expect(calls.filter((line) => line['code'] !== undefined && line['reason'] !== R.ledgerFenced)).toEqual([]);
  expect(await store.info(1)).toMatchObject({ state: 'fenced', lastAddConfirmed: fencedLac });
  await store.close();
}, 40_000);

it('lets exactly one of two processes create each ledger id', async () => {
  const path = freshPath();
  const store = new SqliteLedgerStore({ path });
  const worker = startWorker({ mode: 'create', file: path, firstId: 100, lastId: 299 });
  await worker.waitFor((lines) => lines.some((line) => line['ready'] === true));
  const mine: number[] = [];
  for (let id = 100; id <= 299; id++) {
    try {
      await store.create(id);
      mine.push(id);
    } catch (thrown) {
      expect(`${(thrown as LedgerlineError).code} ${(thrown as LedgerlineError).reason}`).toBe(
        `ALREADY_EXISTS ${R.ledgerExists}`,
      );
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  expect(await worker.exited).toBe(0);
  const theirs = worker.lines.filter((line) => typeof line['created'] === 'number').map((line) => line['created']);
  const refused = worker.lines.filter((line) => line['code'] !== undefined);
  expect(refused.every((line) => line['reason'] === R.ledgerExists)).toBe(true);
  expect(mine.filter((id) => theirs.includes(id))).toEqual([]);
  expect([...mine, ...(theirs as number[])].sort((a, b) => a - b)).toEqual(
    Array.from({ length: 200 }, (_, i) => 100 + i),
  );
  await store.close();
}, 40_000);

it('waits busyTimeoutMs for a write lock another process holds, then fails UNAVAILABLE and stays sound', async () => {
  const path = freshPath();
  const store = new SqliteLedgerStore({ path, busyTimeoutMs: 100 });
  const writer = await store.create(1);
  await writer.append([taggedEntry(0, 0)]);
  const worker = startWorker({ mode: 'hold-lock', file: path });
  await worker.waitFor((lines) => lines.some((line) => line['locked'] === true));

  // The wait must not block the event loop: a short timer fires while the append still waits.
  const events: string[] = [];
  const timer = new Promise((resolve) => setTimeout(resolve, 5)).then(() => events.push('timer'));
  const waiting = new SqliteLedgerStore({ path, busyTimeoutMs: 1_000 });
  const blocked = waiting.fence(1).catch((thrown: LedgerlineError) => events.push(`fence ${thrown.code}`));
  await Promise.all([timer, blocked]);
  expect(events).toEqual(['timer', 'fence UNAVAILABLE']);
  await waiting.close();

  await expectFailure(writer.append([taggedEntry(1, 0)]), 'UNAVAILABLE', R.storeUnavailable);
  await expectFailure(store.fence(1), 'UNAVAILABLE', R.storeUnavailable);
  await expectFailure(store.create(2), 'UNAVAILABLE', R.storeUnavailable);
  await expectFailure(store.delete(1), 'UNAVAILABLE', R.storeUnavailable);
  await expectFailure(writer.close(), 'UNAVAILABLE', R.storeUnavailable);
  // Readers never wait in WAL mode, and a store can still be opened.
  expect((await store.read(1, 0, 0)).length).toBe(1);
  expect(await store.info(1)).toMatchObject({ state: 'open', lastAddConfirmed: 0 });
  const opened = new SqliteLedgerStore({ path, busyTimeoutMs: 100 });
  expect(await opened.list()).toEqual({ ledgerIds: [1] });

  worker.send('release');
  expect(await worker.exited).toBe(0);
  expect(await writer.append([taggedEntry(2, 0)])).toBe(1);
  expect(await opened.fence(1)).toBe(1);
  await opened.close();
  await store.close();
  expectSoundFile(path);
}, 40_000);

it('keeps every acknowledged append of a process killed mid-transaction, in a sound file', async () => {
  const entryBytes = 32 * 1024;
  for (let round = 0; round < 3; round++) {
    const path = freshPath();
    const worker = startWorker({ mode: 'append', file: path, ledgerId: 7, entryBytes });
    // Batches of up to 7 x 32 KiB, each one transaction with an fsync: the kill lands inside one most of the time.
    await worker.waitFor((lines) => acks(lines) >= 5 + round * 9);
    await new Promise((resolve) => setTimeout(resolve, round * 3));
    await worker.kill();

    expectSoundFile(path);
    const store = new SqliteLedgerStore({ path });
    const lac = await store.lastAddConfirmed(7);
    const stored = await readAll(store, 7, lac, DEFAULT_MAX_READ_ENTRIES);
    const checked = checkFencingHistory(historyOf(worker.lines, lac, entryBytes), lac, stored);
    expect(checked.problems).toEqual([]);
    const info = await store.info(7);
    expect(info?.sizeBytes).toBe(stored.reduce((sum, entry) => sum + entry.byteLength, 0));
    // The recovering owner takes the ledger over where the dead process left it.
    expect(await store.fence(7)).toBe(lac);
    expect(await store.closeLedger(7)).toBe(lac);
    await store.close();
  }
}, 60_000);

/** The file passes SQLite's integrity check and each ledger holds exactly entries 0..LAC. */
function expectSoundFile(path: string): void {
  const db = new Database(path);
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const mismatched = db
      .prepare(
        `SELECT l.id, l.lac, COUNT(e.entry_id) AS n, COALESCE(MIN(e.entry_id), 0) AS lo, COALESCE(MAX(e.entry_id), -1) AS hi
           FROM ledgers l LEFT JOIN entries e ON e.ledger_id = l.id GROUP BY l.id
          HAVING n != l.lac + 1 OR lo != 0 OR hi != l.lac`,
      )
      .all();
    expect(mismatched).toEqual([]);
  } finally {
    db.close();
  }
}
