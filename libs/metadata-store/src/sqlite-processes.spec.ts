import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LedgerlineError } from '@ledgerline/errors';
import { SqliteMetadataStore } from './sqlite-store.js';
import { WorkerProcess, type WorkerLine } from '@ledgerline/testing';

/*
 * Two processes on one SQLite metadata file, the standalone deployment's real
 * sharing case: compare-and-set must hold across processes, a lock held by
 * the other process must end in UNAVAILABLE / STORE_BUSY after busyTimeoutMs
 * (never INTERNAL) without blocking the event loop, and a process killed
 * mid-transaction must leave a sound file holding every acknowledged write.
 */

const WORKER = join(__dirname, 'testing', 'sqlite-worker.ts');
const dir = mkdtempSync(join(tmpdir(), 'metadata-processes-'));
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

const freshFile = () => join(dir, `metadata-${nextFile++}.db`);
const text = (value: Uint8Array) => new TextDecoder().decode(value);
const acknowledged = (lines: WorkerLine[]) =>
  lines.filter((line) => typeof line['version'] === 'number') as { version: number; value: string }[];

it('lets every version of a node be won by exactly one compare-and-set across two processes', async () => {
  const file = freshFile();
  const store = new SqliteMetadataStore({ path: file });
  const worker = startWorker({ mode: 'cas', file, path: '/counter' });
  await worker.waitFor((lines) => acknowledged(lines).length >= 5);
  const mine: { version: number; value: string }[] = [];
  const myIds: number[] = [];
  for (let op = 0; op < 150; op++) {
    if (op % 5 === 4) myIds.push(await store.nextId('ids'));
    const current = await store.get('/counter');
    const value = `parent:${op}`;
    try {
      mine.push({
        version: await store.put('/counter', new TextEncoder().encode(value), {
          expectedVersion: current?.version ?? 'absent',
        }),
        value,
      });
    } catch (thrown) {
      expect(thrown).toMatchObject({ code: 'ABORTED', reason: 'BAD_VERSION' });
    }
  }
  worker.send('stop');
  expect(await worker.exited).toBe(0);

  const theirs = acknowledged(worker.lines);
  const refused = worker.lines.filter((line) => line['code'] !== undefined);
  expect(refused.filter((line) => line['reason'] !== 'BAD_VERSION')).toEqual([]);
  const all = [...mine, ...theirs].sort((a, b) => a.version - b.version);
  const final = await store.get('/counter');
  // No lost update: each version was acknowledged to exactly one writer, with none skipped.
  expect(all.map((w) => w.version)).toEqual(Array.from({ length: final!.version }, (_, i) => i + 1));
  expect(text(final!.value)).toBe(all[all.length - 1]!.value);
  expect(mine.length).toBeGreaterThan(0);
  expect(refused.length + (150 - mine.length)).toBeGreaterThan(0);
  const ids = [...myIds, ...worker.lines.filter((line) => typeof line['id'] === 'number').map((line) => line['id'])];
  expect(new Set(ids).size).toBe(ids.length);
  await store.close();
}, 40_000);

it('waits busyTimeoutMs on timers for a lock another process holds, then fails UNAVAILABLE', async () => {
  const file = freshFile();
  const store = new SqliteMetadataStore({ path: file, busyTimeoutMs: 100 });
  expect(await store.put('/a', Uint8Array.of(1))).toBe(1);
  const worker = startWorker({ mode: 'hold-lock', file });
  await worker.waitFor((lines) => lines.some((line) => line['locked'] === true));

  // The wait must not block the event loop: a short timer fires while the put still waits.
  const waiting = new SqliteMetadataStore({ path: file, busyTimeoutMs: 1_000 });
  const events: string[] = [];
  const timer = new Promise((resolve) => setTimeout(resolve, 5)).then(() => events.push('timer'));
  const put = waiting.put('/a', Uint8Array.of(2)).catch((thrown: LedgerlineError) => {
    events.push(`put ${thrown.code} ${thrown.reason}`);
  });
  await Promise.all([timer, put]);
  expect(events).toEqual(['timer', 'put UNAVAILABLE STORE_BUSY']);

  for (const write of [
    () => store.put('/a', Uint8Array.of(3), { expectedVersion: 1 }),
    () => store.delete('/a'),
    () => store.nextId('ids'),
    () => store.openSession({ ttlMs: 1_000 }),
  ]) {
    await expect(write()).rejects.toMatchObject({ code: 'UNAVAILABLE', reason: 'STORE_BUSY' });
  }
  // Readers never wait in WAL mode.
  expect(await waiting.get('/a')).toMatchObject({ version: 1 });
  expect(await store.children('/')).toEqual({ names: ['a'] });

  worker.send('release');
  expect(await worker.exited).toBe(0);
  expect(await store.put('/a', Uint8Array.of(4), { expectedVersion: 1 })).toBe(2);
  await waiting.close();
  await store.close();
  expectSoundFile(file);
}, 40_000);

it('keeps every acknowledged write of a process killed mid-transaction, in a sound file', async () => {
  for (let round = 0; round < 3; round++) {
    const file = freshFile();
    const worker = startWorker({ mode: 'cas', file, path: '/counter' });
    await worker.waitFor((lines) => acknowledged(lines).length >= 10 + round * 15);
    await worker.kill();

    expectSoundFile(file);
    const store = new SqliteMetadataStore({ path: file });
    const writes = acknowledged(worker.lines);
    const last = writes[writes.length - 1]!;
    const node = await store.get('/counter');
    // The last acknowledged write is there, or a later one that had not been reported yet.
    expect(node!.version).toBeGreaterThanOrEqual(last.version);
    expect(node!.version).toBeLessThanOrEqual(last.version + 2);
    if (node!.version === last.version) expect(text(node!.value)).toBe(last.value);
    const ids = worker.lines.filter((line) => typeof line['id'] === 'number').map((line) => line['id'] as number);
    expect(await store.nextId('ids')).toBeGreaterThan(Math.max(0, ...ids));
    await store.close();
  }
}, 60_000);

it('reports an unusable or newer file as a LedgerlineError, never a raw SQLite error', () => {
  expect(() => new SqliteMetadataStore({ path: dir })).toThrow(
    expect.objectContaining({ code: 'UNAVAILABLE', reason: 'STORE_UNAVAILABLE' }),
  );
  const newer = freshFile();
  const raw = new Database(newer);
  raw.pragma('user_version = 9');
  raw.close();
  expect(() => new SqliteMetadataStore({ path: newer })).toThrow(
    expect.objectContaining({ code: 'FAILED_PRECONDITION', reason: 'STORE_VERSION_UNSUPPORTED' }),
  );
  expect(() => new SqliteMetadataStore({ path: freshFile(), busyTimeoutMs: -1 })).toThrow(
    expect.objectContaining({ code: 'INVALID_ARGUMENT', reason: 'BAD_STORE_CONFIG' }),
  );
});

function expectSoundFile(file: string): void {
  const db = new Database(file);
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
  } finally {
    db.close();
  }
}
