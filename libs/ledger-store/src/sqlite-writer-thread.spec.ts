import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { ErrorReason, LedgerlineError } from '@ledgerline/errors';
import { LedgerStoreReason } from './errors.js';
import { prepareDatabase } from './sqlite-schema.js';
import { SqliteWriterThread } from './sqlite-writer-thread.js';
import { expectFailure } from './testing/conformance-support.js';

/* The ledger file's writer thread on its own: outcomes per write across the thread, storage errors, a dead thread. */

const dir = mkdtempSync(join(tmpdir(), 'ledger-writer-thread-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const threads: SqliteWriterThread[] = [];
const readers: Database.Database[] = [];
afterEach(async () => {
  await Promise.allSettled(threads.splice(0).map((thread) => thread.close()));
  for (const reader of readers.splice(0)) reader.close();
});

/** A fresh file laid out as the store lays it out, its writer thread, and a connection of this thread to read it. */
function open(
  maxWaiting = 1_000,
  onStopped?: (error: LedgerlineError) => void,
): { thread: SqliteWriterThread; reader: Database.Database } {
  const path = join(dir, `ledgers-${files++}.db`);
  const reader = new Database(path);
  prepareDatabase(reader, 'FULL', 2_000);
  const thread = new SqliteWriterThread({
    path,
    synchronous: 'FULL',
    busyTimeoutMs: 2_000,
    maxPerTransaction: 1_000,
    maxWaiting,
    refuse: () => new LedgerlineError('UNAVAILABLE', ErrorReason.STORE_UNAVAILABLE, 'too many writes wait'),
    ...(onStopped === undefined ? {} : { onStopped }),
  });
  threads.push(thread);
  readers.push(reader);
  return { thread, reader };
}

const entry = (byte: number, size = 8) => new Uint8Array(size).fill(byte);
const append = (ledgerId: number, entries: Uint8Array[]) => ({
  kind: 'append' as const,
  ledgerId,
  entries,
  totalBytes: entries.reduce((sum, e) => sum + e.byteLength, 0),
});

it('answers every write of one run on its own, in order: a refused write rolls back alone', async () => {
  const { thread, reader } = open();
  const outcomes = await Promise.allSettled([
    thread.submit({ kind: 'create', ledgerId: 1, ownerTags: '{}', createdAtMs: 5 }),
    thread.submit(append(1, [entry(1), entry(2, 0), entry(3)])),
    thread.submit(append(2, [entry(9)])),
    thread.submit({ kind: 'create', ledgerId: 1, ownerTags: '{}', createdAtMs: 6 }),
    thread.submit({ kind: 'fence', ledgerId: 1 }),
    thread.submit(append(1, [entry(4)])),
  ]);
  expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as LedgerlineError).reason))).toEqual([
    undefined,
    0,
    LedgerStoreReason.LEDGER_NOT_FOUND,
    LedgerStoreReason.LEDGER_EXISTS,
    2,
    LedgerStoreReason.LEDGER_FENCED,
  ]);
  const rows = reader.prepare('SELECT entry_id, data FROM entries WHERE ledger_id = 1 ORDER BY entry_id').all() as {
    entry_id: number;
    data: Buffer;
  }[];
  expect(rows.map((row) => [row.entry_id, [...row.data]])).toEqual([
    [0, [...entry(1)]],
    [1, []],
    [2, [...entry(3)]],
  ]);
  expect(reader.prepare('SELECT state, lac, size FROM ledgers WHERE id = 1').get()).toEqual({
    state: 'fenced',
    lac: 2,
    size: 16,
  });
});

it('lets a read wait for the writes submitted before it, awaited or not', async () => {
  const { thread, reader } = open();
  const created = thread.submit({ kind: 'create', ledgerId: 7, ownerTags: '{}', createdAtMs: 1 });
  const appended = thread.submit(append(7, [entry(7, 1024), entry(8, 1024)]));
  const settled = thread.settled();
  expect(settled).toBeDefined();
  await settled;
  expect(reader.prepare('SELECT lac FROM ledgers WHERE id = 7').get()).toEqual({ lac: 1 });
  await expect(Promise.all([created, appended])).resolves.toEqual([undefined, 0]);
  expect(thread.settled()).toBeUndefined();
});

it('fails a write the disk has no room for with STORE_FULL, and writes again once there is room', async () => {
  const { thread, reader } = open();
  await thread.submit({ kind: 'create', ledgerId: 1, ownerTags: '{}', createdAtMs: 1 });
  await thread.submit(append(1, [entry(1)]));
  // The file may not grow: SQLite fails the inserts as it fails them on a full disk.
  const pages = reader.pragma('page_count', { simple: true }) as number;
  thread.pragma(`max_page_count = ${pages}`);
  await expectFailure(
    thread.submit(
      append(
        1,
        Array.from({ length: 64 }, () => entry(2, 4096)),
      ),
    ),
    'RESOURCE_EXHAUSTED',
    ErrorReason.STORE_FULL,
  );
  expect(reader.prepare('SELECT lac FROM ledgers WHERE id = 1').get()).toEqual({ lac: 0 });
  thread.pragma('max_page_count = 1073741823');
  await expect(thread.submit(append(1, [entry(3)]))).resolves.toBe(1);
});

it('refuses a write past maxWaiting at once, without sending it', async () => {
  const { thread } = open(2);
  const accepted = [
    thread.submit({ kind: 'create', ledgerId: 1, ownerTags: '{}', createdAtMs: 1 }),
    thread.submit({ kind: 'create', ledgerId: 2, ownerTags: '{}', createdAtMs: 1 }),
  ];
  await expectFailure(
    thread.submit({ kind: 'create', ledgerId: 3, ownerTags: '{}', createdAtMs: 1 }),
    'UNAVAILABLE',
    ErrorReason.STORE_UNAVAILABLE,
  );
  await Promise.all(accepted);
  await expectFailure(thread.submit({ kind: 'fence', ledgerId: 3 }), 'NOT_FOUND', LedgerStoreReason.LEDGER_NOT_FOUND);
});

it('fails the writes in flight and every later one UNAVAILABLE when the thread dies, and never leaves a read waiting', async () => {
  const stopped: LedgerlineError[] = [];
  const { thread } = open(1_000, (error) => stopped.push(error));
  await thread.submit({ kind: 'create', ledgerId: 1, ownerTags: '{}', createdAtMs: 1 });
  const inFlight = Array.from({ length: 50 }, () => thread.submit(append(1, [entry(1, 512)])));
  const read = thread.settled();
  await (thread as unknown as { worker: Worker }).worker.terminate();
  const outcomes = await Promise.allSettled(inFlight);
  // Writes the thread answered before it died stand; the rest fail, none hangs.
  for (const outcome of outcomes) {
    if (outcome.status === 'rejected') {
      expect((outcome.reason as LedgerlineError).reason).toBe(ErrorReason.STORE_UNAVAILABLE);
    }
  }
  await read;
  await expectFailure(thread.submit(append(1, [entry(2)])), 'UNAVAILABLE', ErrorReason.STORE_UNAVAILABLE);
  // Told once, so the store counts and logs it as a background error.
  expect(stopped.map((error) => error.reason)).toEqual([ErrorReason.STORE_UNAVAILABLE]);
  await thread.close();
  expect(stopped).toHaveLength(1);
});

it('runs the writes submitted before close, then ends the thread', async () => {
  const { thread, reader } = open();
  const writes = [
    thread.submit({ kind: 'create', ledgerId: 4, ownerTags: '{}', createdAtMs: 1 }),
    thread.submit(append(4, [entry(1), entry(2)])),
  ];
  await thread.close();
  await expect(Promise.all(writes)).resolves.toEqual([undefined, 0]);
  expect(reader.prepare('SELECT lac FROM ledgers WHERE id = 4').get()).toEqual({ lac: 1 });
  await expectFailure(thread.submit({ kind: 'fence', ledgerId: 4 }), 'UNAVAILABLE', ErrorReason.STORE_UNAVAILABLE);
});

it('tells nobody of a thread stopped by close', async () => {
  const stopped: LedgerlineError[] = [];
  const { thread } = open(1_000, (error) => stopped.push(error));
  await thread.submit({ kind: 'create', ledgerId: 1, ownerTags: '{}', createdAtMs: 1 });
  await thread.close();
  expect(stopped).toEqual([]);
});
