import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectFailure, taggedEntry } from './testing/conformance-support.js';
import { LedgerStoreReason as R } from './errors.js';
import { SqliteLedgerStore } from './sqlite-store.js';

/* What only the file-backed store has: persistence across reopen and a versioned file layout. */

const dir = mkdtempSync(join(tmpdir(), 'ledger-store-sqlite-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('keeps ledgers, states and entries across close and reopen, in WAL mode', async () => {
  const path = join(dir, 'reopen.db');
  const first = new SqliteLedgerStore({ path });
  const writer = await first.create(1, { ownerTags: { topic: 't' } });
  await writer.append([taggedEntry(0, 0), taggedEntry(0, 1)]);
  await first.fence(1);
  await first.close();

  const second = new SqliteLedgerStore({ path, synchronous: 'NORMAL' });
  expect(await second.info(1)).toMatchObject({ state: 'fenced', lastAddConfirmed: 1, ownerTags: { topic: 't' } });
  expect((await second.read(1, 0, 1)).map((e) => e.entryId)).toEqual([0, 1]);
  await expectFailure(writer.append([taggedEntry(1, 0)]), 'FAILED_PRECONDITION', R.storeClosed);
  await second.close();
  const raw = new Database(path, { readonly: true });
  expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
  raw.close();
});

it('refuses a file written with a newer layout', async () => {
  const path = join(dir, 'newer.db');
  const raw = new Database(path);
  raw.pragma('user_version = 2');
  raw.close();
  expect(() => new SqliteLedgerStore({ path })).toThrow(expect.objectContaining({ code: 'FAILED_PRECONDITION' }));
});

it('runs fully in memory for tests of code built on the store', async () => {
  const store = new SqliteLedgerStore({ path: ':memory:' });
  const writer = await store.create(3);
  expect(await writer.append([Uint8Array.of(9)])).toBe(0);
  expect(await store.lastAddConfirmed(3)).toBe(0);
  await store.close();
});

it('creates a missing folder, and reports a path it cannot open as UNAVAILABLE', async () => {
  const store = new SqliteLedgerStore({ path: join(dir, 'new-folder', 'nested', 'x.db') });
  await store.create(1);
  await store.close();
  expect(() => new SqliteLedgerStore({ path: dir })).toThrow(
    expect.objectContaining({ code: 'UNAVAILABLE', reason: R.storeUnavailable }),
  );
  writeFileSync(join(dir, 'a-file'), 'x');
  expect(() => new SqliteLedgerStore({ path: join(dir, 'a-file', 'x.db') })).toThrow(
    expect.objectContaining({ code: 'UNAVAILABLE', reason: R.storeUnavailable }),
  );
});
