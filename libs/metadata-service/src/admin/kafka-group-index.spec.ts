import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMetadataStore, type MetadataStore } from '@ledgerline/metadata-store';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';
import { sharedServers, uniqueNamespace } from '@ledgerline/testing';
import { MetadataAdmin } from '../metadata-admin.js';
import { writeRecord } from '../records/store-records.js';
import { namespacePath } from '../records/layout.js';
import { NamespaceRecordSchema } from '../records/records.js';
import { readRecord } from '../records/store-records.js';
import { NamespaceName } from '@ledgerline/naming';
import { failure } from '../testing/spec-support.js';

const NS = 'acme/orders';
const topic = (index: number) => `persistent://${NS}/t-partition-${index}`;
const RECORD = '/kafka/groups/acme/orders/billing';

const backends: [string, () => Promise<{ store: MetadataStore; dispose(): void }>][] = [
  [
    'SQLite',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'kafka-group-index-'));
      const store = await createMetadataStore({
        kind: 'sqlite',
        path: join(dir, 'metadata.db'),
        synchronous: 'NORMAL',
      });
      return { store, dispose: () => rmSync(dir, { recursive: true, force: true }) };
    },
  ],
  [
    'Redis',
    async () => {
      const keyPrefix = `${uniqueNamespace('group-index')}:`;
      const store = await createMetadataStore({ kind: 'redis', url: sharedServers().redisUrl, keyPrefix });
      return { store, dispose: () => undefined };
    },
  ],
];

describe.each(backends)("the Kafka groups' index of committed partitions on %s", (_name, open) => {
  let store: MetadataStore;
  let dispose: () => void;
  let admin: MetadataAdmin;

  beforeEach(async () => {
    ({ store, dispose } = await open());
    admin = new MetadataAdmin(store, { recountSettleMs: 0 });
    await admin.createTenant('acme');
    await admin.createNamespace(NS);
  });
  afterEach(async () => {
    await store.close();
    dispose();
  });

  it('indexes each partition once, answers the entries in name order, and a group without a record as complete', async () => {
    expect(await admin.getKafkaGroupIndex(NS, 'billing')).toEqual({ state: 'complete', topics: [], version: 0 });
    for (const index of [2, 0, 2, 1])
      expect(await admin.addKafkaGroupPartition(topic(index), 'billing')).toBe('complete');
    const index = await admin.getKafkaGroupIndex(NS, 'billing');
    expect(index).toMatchObject({ state: 'complete', topics: [topic(0), topic(1), topic(2)] });
    expect(index.version).toBeGreaterThan(0);
    // An entry already there costs no write.
    const before = (await store.get(RECORD))!.version;
    await admin.addKafkaGroupPartition(topic(1), 'billing');
    expect((await store.get(RECORD))!.version).toBe(before);
  });

  it("starts a group's index partial in a namespace created before the index, until it is marked complete", async () => {
    // A namespace record written before the index existed has no kafkaGroupsIndexed.
    const path = namespacePath(NamespaceName.parse(NS));
    const found = (await readRecord(store, path, NamespaceRecordSchema))!;
    const { kafkaGroupsIndexed: _dropped, ...older } = found.record;
    await writeRecord(store, path, older, found.version);
    expect((await admin.getKafkaGroupIndex(NS, 'billing')).state).toBe('partial');
    expect(await admin.addKafkaGroupPartition(topic(0), 'billing')).toBe('partial');
    expect(await admin.updateKafkaGroupIndex(NS, 'billing', [], true)).toBe('complete');
    expect(await admin.getKafkaGroupIndex(NS, 'billing')).toMatchObject({ state: 'complete', topics: [topic(0)] });
    // Marking a group without a record writes none.
    expect(await admin.updateKafkaGroupIndex(NS, 'other', [], true)).toBeUndefined();
    expect(await store.get('/kafka/groups/acme/orders/other')).toBeUndefined();
  });

  it('marks a group past its bound unindexed and adds nothing from then on', async () => {
    for (const index of [0, 1, 2])
      expect(await admin.addKafkaGroupPartition(topic(index), 'billing', 3)).toBe('complete');
    expect(await admin.addKafkaGroupPartition(topic(3), 'billing', 3)).toBe('unindexed');
    expect(await admin.addKafkaGroupPartition(topic(4), 'billing', 10)).toBe('unindexed');
    const index = await admin.getKafkaGroupIndex(NS, 'billing');
    expect(index).toMatchObject({ state: 'unindexed', topics: [topic(0), topic(1), topic(2)] });
  });

  it('removes entries, lowering the count, so a group deleting and committing stays within its bound', async () => {
    await admin.addKafkaGroupPartition(topic(0), 'billing', 2);
    await admin.addKafkaGroupPartition(topic(1), 'billing', 2);
    expect(await admin.updateKafkaGroupIndex(NS, 'billing', [topic(0), topic(0), topic(7)])).toBe('complete');
    expect(await admin.addKafkaGroupPartition(topic(2), 'billing', 2)).toBe('complete');
    expect((await admin.getKafkaGroupIndex(NS, 'billing')).topics).toEqual([topic(1), topic(2)]);
  });

  it('deletes the record and every entry at the version read, and refuses a stale version with KAFKA_GROUP_INDEX_CHANGED', async () => {
    await admin.addKafkaGroupPartition(topic(0), 'billing');
    const read = await admin.getKafkaGroupIndex(NS, 'billing');
    await admin.addKafkaGroupPartition(topic(1), 'billing');
    const stale = await failure(admin.deleteKafkaGroupIndex(NS, 'billing', read.version));
    expect([stale.code, stale.reason]).toEqual(['ABORTED', MetadataServiceReason.KAFKA_GROUP_INDEX_CHANGED]);
    const again = await admin.getKafkaGroupIndex(NS, 'billing');
    await admin.deleteKafkaGroupIndex(NS, 'billing', again.version);
    expect(await store.get(RECORD)).toBeUndefined();
    expect((await store.children(RECORD)).names).toEqual([]);
    // Deleting what is gone is done.
    await admin.deleteKafkaGroupIndex(NS, 'billing', again.version);
  });

  it("re-creates the record of an entry written after a deletion removed it, so the group's commit stays found", async () => {
    await admin.addKafkaGroupPartition(topic(0), 'billing');
    // The deletion removes the record between the add's count and its entry: the add sees it gone and writes it anew.
    const put = store.put.bind(store);
    let deleted = false;
    store.put = async (path, value, options) => {
      if (!deleted && path === `${RECORD}/t-partition-1`) {
        deleted = true;
        const read = await admin.getKafkaGroupIndex(NS, 'billing');
        await admin.deleteKafkaGroupIndex(NS, 'billing', read.version);
      }
      return put(path, value, options);
    };
    expect(await admin.addKafkaGroupPartition(topic(1), 'billing')).toBe('complete');
    expect(deleted).toBe(true);
    expect(await admin.getKafkaGroupIndex(NS, 'billing')).toMatchObject({ state: 'complete', topics: [topic(1)] });
  });

  it('refuses bad input with INVALID_ARGUMENT and a reason, never a crash', async () => {
    const refusals = await Promise.all([
      failure(admin.addKafkaGroupPartition(topic(0), '')),
      failure(admin.addKafkaGroupPartition(topic(0), '..')),
      failure(admin.addKafkaGroupPartition(topic(0), 'x'.repeat(1100))),
      failure(admin.addKafkaGroupPartition(topic(0), 'lone \ud800 surrogate')),
      failure(admin.addKafkaGroupPartition(topic(0), 'billing', 10_001)),
      failure(admin.addKafkaGroupPartition(topic(0), 'billing', -1)),
      failure(admin.addKafkaGroupPartition('not a topic//', 'billing')),
      failure(admin.getKafkaGroupIndex('acme', 'billing')),
      failure(admin.updateKafkaGroupIndex(NS, 'billing', ['persistent://acme/elsewhere/t'])),
      failure(admin.deleteKafkaGroupIndex(NS, 'billing', 0)),
    ]);
    for (const refusal of refusals) expect(refusal.code).toBe('INVALID_ARGUMENT');
    expect(refusals.slice(0, 6).map((refusal) => refusal.reason)).toEqual(
      Array(6).fill(MetadataServiceReason.INVALID_KAFKA_GROUP),
    );
    expect(refusals[0]!.message).toContain('non-empty');
    expect(refusals[2]!.message).toContain('1024 bytes');
  });

  it("removes every group's index with its namespace", async () => {
    await admin.addKafkaGroupPartition(topic(0), 'billing');
    await admin.addKafkaGroupPartition(topic(0), 'audit');
    await admin.deleteNamespace(NS);
    expect((await store.children('/kafka/groups/acme/orders')).names).toEqual([]);
    expect((await store.children(RECORD)).names).toEqual([]);
  });
});
