import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InProcessBus } from '@ledgerline/bus';
import { SqliteLedgerStore } from '@ledgerline/ledger-store';
import { MetadataStoreManagedLedgerMetadata } from '@ledgerline/managed-ledger';
import { startMetadataService, type RunningMetadataService } from '@ledgerline/metadata-service';
import { SqliteMetadataStore } from '@ledgerline/metadata-store';
import { AdminService, CursorsService, TopicsService } from '@ledgerline/proto';
import { closeClient, createClient, type Client } from '@ledgerline/rpc';
import { ownersMetadataConfig, testServiceConfig } from '@ledgerline/ownership/testing';
import pino from 'pino';
import { resolveWriterSettings, type WriterSettings } from '../config.js';
import { startWriterOwnerService, type RunningWriterOwner, type WriterOwnerServiceOptions } from '../server.js';

/**
 * Settings under which a topic keeps no closed ledger it does not need: two
 * entries a ledger, rolled over at once and trimmed every 100 ms, with a
 * deduplication snapshot per entry so the deduplication cursor never holds
 * trimming back; with retention 0 a ledger goes once no subscription needs it.
 */
export const QUICK_TRIM_SETTINGS = {
  maxEntriesPerLedger: 2,
  minLedgerAgeMs: 0,
  trimIntervalMs: 100,
  dedupSnapshotIntervalEntries: 1,
} as const;

export interface WriterHarness {
  readonly writer: RunningWriterOwner;
  readonly metadata: RunningMetadataService;
  readonly writerAddress: string;
  readonly topics: Client<typeof TopicsService>;
  readonly cursors: Client<typeof CursorsService>;
  readonly admin: Client<typeof AdminService>;
  /** Creates tenant `t`, namespace `t/<namespace>` and the topic; returns its full name. */
  createTopic(local: string, namespace?: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * A metadata service and a writer owner in this process on SQLite files and
 * the in-process bus, each on its own loopback port, with clients for both.
 */
export async function startWriterHarness(options: {
  settings?: Partial<WriterSettings>;
  consumeBackend: WriterOwnerServiceOptions['consumeBackend'];
}): Promise<WriterHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'ledgerline-writer-'));
  const bus = new InProcessBus();
  const store = new SqliteMetadataStore({ path: join(dir, 'metadata.db'), bus, synchronous: 'NORMAL' });
  const metadata = await startMetadataService({
    store,
    bus,
    config: ownersMetadataConfig(),
    signals: [],
  });
  const ledgerStore = new SqliteLedgerStore({ path: join(dir, 'ledgers.db'), synchronous: 'NORMAL' });
  const writer = await startWriterOwnerService({
    config: testServiceConfig(),
    // The owner's own lease TTL (10 s): the metadata service and the owner share this process, so a busy
    // machine that starves it for a few seconds would otherwise expire the owner's session mid-test.
    settings: resolveWriterSettings(options.settings),
    metadataAddress: `127.0.0.1:${metadata.port}`,
    ledgerStore,
    metadata: new MetadataStoreManagedLedgerMetadata(store),
    bus,
    consumeBackend: options.consumeBackend,
    logger: pino({ level: 'silent' }),
    signals: [],
    closers: [{ name: 'ledger-store', close: () => ledgerStore.close() }],
  });
  const writerAddress = `127.0.0.1:${writer.port}`;
  const topics = createClient(TopicsService, writerAddress);
  const cursors = createClient(CursorsService, writerAddress);
  const admin = createClient(AdminService, `127.0.0.1:${metadata.port}`);
  const tenants = new Set<string>();
  const namespaces = new Set<string>();
  return {
    writer,
    metadata,
    writerAddress,
    topics,
    cursors,
    admin,
    async createTopic(local, namespace = 'ns') {
      if (!tenants.has('t')) {
        await admin.createTenant({ tenant: 't' });
        tenants.add('t');
      }
      if (!namespaces.has(namespace)) {
        await admin.createNamespace({ namespace: `t/${namespace}` });
        namespaces.add(namespace);
      }
      const name = `persistent://t/${namespace}/${local}`;
      await admin.createTopic({ topic: name });
      return name;
    },
    async close() {
      for (const client of [topics, cursors, admin]) closeClient(client);
      await writer.shutdown('test finished');
      await metadata.shutdown('test finished');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
