import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InProcessBus } from '@ledgerline/bus';
import { SqliteMetadataStore, type MetadataStore } from '@ledgerline/metadata-store';
import { MetadataAdmin, type MetadataAdminOptions } from '../metadata-admin.js';
import type { OwnerLoadRecord } from '../records/owner-load.js';

/** A clock that runs with the wall clock plus an offset tests can move forward (session expiry without sleeping). */
export class TestClock {
  offsetMs = 0;
  readonly now = (): number => Date.now() + this.offsetMs;
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

export interface SqliteFixture {
  admin: MetadataAdmin;
  store: MetadataStore;
  bus: InProcessBus;
  clock: TestClock;
  close(): Promise<void>;
}

/** A MetadataAdmin over a throwaway SQLite file and an in-process bus. */
export function sqliteFixture(options: MetadataAdminOptions = {}): SqliteFixture {
  const dir = mkdtempSync(join(tmpdir(), 'ledgerline-metadata-'));
  const bus = new InProcessBus();
  const store = new SqliteMetadataStore({ path: join(dir, 'metadata.db'), bus, synchronous: 'NORMAL' });
  const clock = new TestClock();
  const admin = new MetadataAdmin(store, { bus, now: clock.now, ...options });
  return {
    admin,
    store,
    bus,
    clock,
    async close() {
      await store.close();
      await bus.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Awaits a call that must fail and returns its error (the name these specs have always used). */
export { refusal as failure } from '@ledgerline/testing';

/** An owner's load report with nothing but `messagesInPerSecond` (the balancer's specs weigh owners by it). */
export function messagesInLoad(messagesPerSecond: number): OwnerLoadRecord {
  return {
    topicsOwned: 0,
    messagesInPerSecond: messagesPerSecond,
    bytesInPerSecond: 0,
    messagesOutPerSecond: 0,
    bytesOutPerSecond: 0,
    consumers: 0,
    pendingEntries: 0,
    cpuShare: 0,
    intervalMs: 1_000,
  };
}
