import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeLedgerStoreConformance } from './testing/ledger-store.conformance.js';
import { SqliteLedgerStore } from './sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'ledger-store-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A file's writes commit on the store's writer thread by default; on the event loop when told (and in memory).
describeLedgerStoreConformance({
  name: 'sqlite',
  open: (namespace, options) => new SqliteLedgerStore({ ...options, path: join(dir, `${namespace}.db`) }),
});

describeLedgerStoreConformance({
  name: 'sqlite, writes on the event loop',
  open: (namespace, options) =>
    new SqliteLedgerStore({ ...options, path: join(dir, `loop-${namespace}.db`), writerThread: false }),
});
