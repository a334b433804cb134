import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InProcessBus, type Bus } from '@ledgerline/bus';
import { SqliteLedgerStore } from '@ledgerline/ledger-store';
import { MetadataStoreManagedLedgerMetadata } from '@ledgerline/managed-ledger';
import { startMetadataService, type RunningMetadataService } from '@ledgerline/metadata-service';
import { SqliteMetadataStore } from '@ledgerline/metadata-store';
import { AdminService, CursorsService, LookupService, TopicsService } from '@ledgerline/proto';
import { ownersMetadataConfig, testServiceConfig } from '@ledgerline/ownership/testing';
import {
  resolveReadOnlySettings,
  startReadOnlyOwnerService,
  type ReadOnlySettings,
  type RunningReadOnlyOwner,
} from '../index.js';
import { closeClient, createClient, type Client } from '@ledgerline/rpc';
import {
  consumeBackend,
  resolveWriterSettings,
  startWriterOwnerService,
  type RunningWriterOwner,
} from '@ledgerline/writer-owner';
import pino from 'pino';

export const READER_GROUP = 'readers';
/** A second reader namespace of the same writer namespace, `t/quiet`, served by this group. */
export const QUIET_GROUP = 'quiet-readers';

export interface ReadOnlyHarness {
  readonly metadata: RunningMetadataService;
  readonly writer: RunningWriterOwner;
  /** The writer owner's TopicsService and CursorsService. */
  readonly writerTopics: Client<typeof TopicsService>;
  readonly writerCursors: Client<typeof CursorsService>;
  readonly admin: Client<typeof AdminService>;
  readonly lookup: Client<typeof LookupService>;
  readonly readOnly: RunningReadOnlyOwner[];
  /** TopicsService clients of the read-only owners, by index. */
  readonly readOnlyTopics: Client<typeof TopicsService>[];
  /** Starts another read-only owner (group `readers` unless settings say otherwise); `bus: false` gives it no notifications at all. */
  addReadOnlyOwner(options?: { settings?: Partial<ReadOnlySettings>; bus?: boolean }): Promise<number>;
  /** Tenant `t`, writer namespace `t/writer`, reader namespaces `t/reader` (group `readers`) and `t/quiet` (group `quiet-readers`) mirroring it. */
  createTopic(local: string): Promise<{ writerTopic: string; readerTopic: string }>;
  /** Publishes `m<from>` .. `m<from + count - 1>` to a writer topic, one at a time, as producer `p` with those sequence ids. */
  publishNumbered(writerTopic: string, from: number, count: number): Promise<void>;
  close(): Promise<void>;
}

export interface ReadOnlyHarnessOptions {
  /** The bus every service shares (a NATS bus, to stop and restart its server); the caller closes it. Default in-process. */
  bus?: Bus;
  /** The writer owner's gRPC message bound (4 MiB by default): small, a cursor outgrows one answer soon. */
  writerMaxMessageSizeBytes?: number;
}

/**
 * A metadata service, a writer owner and read-only owners in this process,
 * on one SQLite metadata file and one SQLite ledger file and one bus (the
 * in-process one unless given), each on its own loopback port. It runs
 * both kinds of owner: the package's production code may not import the
 * writer owner, its specs and this harness may (see eslint.config.mjs).
 */
export async function startReadOnlyHarness(options: ReadOnlyHarnessOptions = {}): Promise<ReadOnlyHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'ledgerline-readonly-'));
  const bus = options.bus ?? new InProcessBus();
  const store = new SqliteMetadataStore({ path: join(dir, 'metadata.db'), bus, synchronous: 'NORMAL' });
  const metadata = await startMetadataService({
    store,
    bus,
    config: ownersMetadataConfig(),
    signals: [],
  });
  const metadataAddress = `127.0.0.1:${metadata.port}`;
  const ledgerStore = new SqliteLedgerStore({ path: join(dir, 'ledgers.db'), synchronous: 'NORMAL' });
  const mlMetadata = new MetadataStoreManagedLedgerMetadata(store);
  const writer = await startWriterOwnerService({
    config: {
      ...testServiceConfig(),
      ...(options.writerMaxMessageSizeBytes === undefined
        ? {}
        : { maxMessageSizeBytes: options.writerMaxMessageSizeBytes }),
    },
    // Small ledgers, and a deduplication snapshot per entry so its cursor never holds trimming back.
    settings: resolveWriterSettings({
      leaseTtlMs: 3_000,
      maxEntriesPerLedger: 5,
      minLedgerAgeMs: 0,
      dedupSnapshotIntervalEntries: 1,
    }),
    metadataAddress,
    ledgerStore,
    metadata: mlMetadata,
    bus,
    consumeBackend,
    logger: pino({ level: 'silent' }),
    signals: [],
  });
  const writerAddress = `127.0.0.1:${writer.port}`;
  const writerTopics = createClient(TopicsService, writerAddress);
  const writerCursors = createClient(CursorsService, writerAddress);
  const admin = createClient(AdminService, metadataAddress);
  const lookup = createClient(LookupService, metadataAddress);
  const readOnly: RunningReadOnlyOwner[] = [];
  const readOnlyTopics: Client<typeof TopicsService>[] = [];
  let namespacesMade = false;
  return {
    metadata,
    writer,
    writerTopics,
    writerCursors,
    admin,
    lookup,
    readOnly,
    readOnlyTopics,
    async addReadOnlyOwner(options = {}) {
      const running = await startReadOnlyOwnerService({
        config: testServiceConfig(),
        settings: resolveReadOnlySettings({
          ownerGroup: READER_GROUP,
          leaseTtlMs: 3_000,
          lacFallbackMs: 20,
          cursorSyncIntervalMs: 10,
          ...options.settings,
        }),
        metadataAddress,
        ledgerStore,
        metadata: mlMetadata,
        ...(options.bus === false ? {} : { bus: bus as Bus }),
        logger: pino({ level: 'silent' }),
        signals: [],
      });
      readOnly.push(running);
      readOnlyTopics.push(createClient(TopicsService, `127.0.0.1:${running.port}`));
      return readOnly.length - 1;
    },
    async createTopic(local) {
      if (!namespacesMade) {
        await admin.createTenant({ tenant: 't' });
        await admin.createNamespace({ namespace: 't/writer' });
        await admin.createNamespace({ namespace: 't/reader', policies: { ownerGroup: READER_GROUP } });
        await admin.setWriterNamespace({ namespace: 't/reader', writerNamespace: 't/writer' });
        await admin.createNamespace({ namespace: 't/quiet', policies: { ownerGroup: QUIET_GROUP } });
        await admin.setWriterNamespace({ namespace: 't/quiet', writerNamespace: 't/writer' });
        namespacesMade = true;
      }
      const writerTopic = `persistent://t/writer/${local}`;
      await admin.createTopic({ topic: writerTopic });
      return { writerTopic, readerTopic: `persistent://t/reader/${local}` };
    },
    async publishNumbered(topic, from, count) {
      for (let i = from; i < from + count; i++) {
        await writerTopics.publishOne({
          message: { topic, payload: new TextEncoder().encode(`m${i}`), producerName: 'p', sequenceId: BigInt(i) },
        });
      }
    },
    async close() {
      for (const client of [writerTopics, writerCursors, admin, lookup, ...readOnlyTopics]) closeClient(client);
      for (const running of readOnly) await running.shutdown('test finished');
      await writer.shutdown('test finished');
      await metadata.shutdown('test finished');
      await ledgerStore.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
