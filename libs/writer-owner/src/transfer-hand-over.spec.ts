import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InProcessBus } from '@ledgerline/bus';
import { SqliteLedgerStore } from '@ledgerline/ledger-store';
import { MetadataStoreManagedLedgerMetadata } from '@ledgerline/managed-ledger';
import { FaultInjectingMetadata } from '@ledgerline/managed-ledger/testing';
import { startMetadataService, type RunningMetadataService } from '@ledgerline/metadata-service';
import { SqliteMetadataStore } from '@ledgerline/metadata-store';
import { managedLedgerPath, TopicName } from '@ledgerline/naming';
import { ownersMetadataConfig, testServiceConfig } from '@ledgerline/ownership/testing';
import { AdminService, type PublishMessage } from '@ledgerline/proto';
import { closeClient, createClient } from '@ledgerline/rpc';
import pino from 'pino';
import { resolveWriterSettings } from './config.js';
import { startWriterOwnerService, type RunningWriterOwner } from './server.js';
import { noConsumers } from './testing/no-consumers.js';

/*
 * A transfer's LoadTopic carries what the source's close left in the
 * metadata store (hand-over-state.ts of @ledgerline/managed-ledger). Two
 * writer owners share one metadata service and one ledger store; the
 * target's view of the metadata counts its reads and can hold its first
 * write, so a test can change the node while the target loads.
 */

const READS = new Set(['getManagedLedgerInfo', 'listCursors', 'getCursorInfo']);

function message(topic: string, sequenceId: bigint): PublishMessage {
  return { topic, producerName: 'p', sequenceId, payload: new TextEncoder().encode(`m${sequenceId}`) } as never;
}

describe('a transfer handing its close over to the target', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledgerline-hand-over-'));
  const bus = new InProcessBus();
  const metadataStore = new SqliteMetadataStore({ path: join(dir, 'metadata.db'), bus, synchronous: 'NORMAL' });
  const ledgerStore = new SqliteLedgerStore({ path: join(dir, 'ledgers.db'), synchronous: 'NORMAL' });
  const direct = new MetadataStoreManagedLedgerMetadata(metadataStore);
  const targetMetadata = new FaultInjectingMetadata(new MetadataStoreManagedLedgerMetadata(metadataStore));
  const targetReads: string[] = [];
  let metadata: RunningMetadataService;
  let source: RunningWriterOwner;
  let target: RunningWriterOwner;
  let admin: ReturnType<typeof createClient<typeof AdminService>>;

  async function startWriter(view: MetadataStoreManagedLedgerMetadata | FaultInjectingMetadata) {
    return startWriterOwnerService({
      config: testServiceConfig(),
      settings: resolveWriterSettings({}),
      metadataAddress: `127.0.0.1:${metadata.port}`,
      ledgerStore,
      metadata: view,
      bus,
      consumeBackend: noConsumers,
      logger: pino({ level: 'silent' }),
      signals: [],
    });
  }

  async function createTopic(local: string): Promise<string> {
    const name = `persistent://t/ns/${local}`;
    await admin.createTopic({ topic: name });
    return name;
  }

  /** A new topic that placement puts on the source (the target is the owner whose metadata view is watched). */
  async function topicOnSource(local: string) {
    for (let attempt = 0; attempt < 64; attempt++) {
      const topic = await createTopic(`${local}-${attempt}`);
      const owned = await source.owner.topic(topic).catch(() => undefined);
      if (owned !== undefined) return { topic, owned, path: managedLedgerPath(TopicName.parse(topic), 1) };
    }
    throw new Error('placement put no topic on the source');
  }

  beforeAll(async () => {
    metadata = await startMetadataService({
      store: metadataStore,
      bus,
      config: ownersMetadataConfig(),
      signals: [],
    });
    admin = createClient(AdminService, `127.0.0.1:${metadata.port}`);
    await admin.createTenant({ tenant: 't' });
    await admin.createNamespace({ namespace: 't/ns' });
    // Every read the target makes of a managed ledger's nodes is counted.
    for (const call of READS) {
      const view = targetMetadata as unknown as Record<string, (...args: unknown[]) => unknown>;
      const read = view[call]!.bind(targetMetadata);
      view[call] = (...args: unknown[]) => {
        targetReads.push(`${call} ${String(args[0])}`);
        return read(...args);
      };
    }
    source = await startWriter(new MetadataStoreManagedLedgerMetadata(metadataStore));
    target = await startWriter(targetMetadata);
  });

  afterAll(async () => {
    closeClient(admin);
    await target.shutdown('test finished');
    await source.shutdown('test finished');
    await metadata.shutdown('test finished');
    await ledgerStore.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('loads the topic on the target without reading its nodes, entries and deduplication carried on', async () => {
    const { topic, owned, path } = await topicOnSource('carried');
    const stored = [];
    for (let sequenceId = 0n; sequenceId < 3n; sequenceId++)
      stored.push(await owned.publish(message(topic, sequenceId)));
    targetReads.length = 0;
    await source.owner.transfer(topic, target.owner.identity.instanceId);
    expect(targetReads.filter((read) => read.includes(path))).toEqual([]);
    const moved = await target.owner.topic(topic);
    expect((await moved.publish(message(topic, 2n))).duplicate).toBe(true);
    const next = await moved.publish(message(topic, 3n));
    expect([next.duplicate, next.firstOffset]).toEqual([false, stored[2]!.firstOffset + 1]);
  }, 60_000);

  it('reads the nodes again when they changed after the close, and loses nothing', async () => {
    const { topic, owned, path } = await topicOnSource('stale');
    const stored = [];
    for (let sequenceId = 0n; sequenceId < 3n; sequenceId++)
      stored.push(await owned.publish(message(topic, sequenceId)));
    // The target's first write (its open's compare-and-set) waits until the node was written behind its back.
    let release = (): void => undefined;
    let reached = (): void => undefined;
    const held = new Promise<void>((resolve) => (reached = resolve));
    targetMetadata.faults.push({
      call: 'putManagedLedgerInfo',
      mode: 'pass',
      until: new Promise<void>((resolve) => (release = resolve)),
      reached,
    });
    targetReads.length = 0;
    const moving = source.owner.transfer(topic, target.owner.identity.instanceId);
    await held;
    const node = (await direct.getManagedLedgerInfo(path))!;
    await direct.putManagedLedgerInfo(path, node.value, node.version);
    release();
    await moving;
    expect(targetReads.filter((read) => read.includes(path))).toContain(`getManagedLedgerInfo ${path}`);
    const moved = await target.owner.topic(topic);
    expect((await moved.publish(message(topic, 2n))).duplicate).toBe(true);
    const next = await moved.publish(message(topic, 3n));
    expect([next.duplicate, next.firstOffset]).toEqual([false, stored[2]!.firstOffset + 1]);
  }, 60_000);
});
