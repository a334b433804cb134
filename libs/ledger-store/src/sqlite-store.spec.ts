import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeLedgerStoreConformance } from './testing/ledger-store.conformance.js';
import { SqliteLedgerStore } from './sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'ledger-store-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeLedgerStoreConformance({
  name: 'sqlite',
  open: (namespace, options) => new SqliteLedgerStore({ ...options, path: join(dir, `${namespace}.db`) }),
});
