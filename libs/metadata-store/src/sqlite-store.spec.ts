import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { metadataStoreConformance } from './testing/metadata-store.conformance.js';
import { SqliteMetadataStore } from './sqlite-store.js';
import type { MetadataStore } from './store.js';

let dir: string;
const handles = new Map<MetadataStore, Database.Database>();

metadataStoreConformance({
  name: 'SqliteMetadataStore',
  setup: async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-metadata-'));
  },
  open: async (options = {}) => {
    // Each client gets its own handle on the shared file, as separate processes would.
    const database = new Database(join(dir, 'metadata.sqlite'));
    const store = new SqliteMetadataStore({ ...options, database, synchronous: 'normal' });
    handles.set(store, database);
    return store;
  },
  crash: async (store) => {
    handles.get(store)?.close();
  },
  teardown: async () => {
    for (const database of handles.values()) if (database.open) database.close();
    rmSync(dir, { recursive: true, force: true });
  },
});
