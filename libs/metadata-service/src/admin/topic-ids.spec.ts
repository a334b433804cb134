import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { LedgerInfoSchema, ManagedLedgerInfoSchema, ManagedLedgerState } from '@ledgerline/proto';
import { MetadataAdmin } from '../metadata-admin.js';
import { encodeRecord } from '../records/record-codec.js';
import { TOPIC_ID_PROPERTY } from '../records/managed-ledger-nodes.js';
import { failure, sqliteFixture, type SqliteFixture } from '../testing/spec-support.js';

const NS = 'tenant/ns';
const PLAIN = `persistent://${NS}/plain`;
const PARTITIONED = `persistent://${NS}/orders`;
const PLAIN_NODE = '/managed-ledgers/tenant/ns/persistent/plain';
const PARTITIONED_RECORD = '/admin/partitioned-topics/tenant/ns/orders';

function bytes(topicId: string | undefined): Uint8Array {
  return Buffer.from(topicId ?? '', 'hex');
}

describe('topic ids', () => {
  let fixture: SqliteFixture;
  beforeEach(async () => {
    fixture = sqliteFixture({ recountSettleMs: 0 });
    await fixture.admin.createTenant('tenant');
    await fixture.admin.createNamespace(NS);
  });
  afterEach(async () => {
    await fixture.close();
  });

  it.each([
    ['partitioned', PARTITIONED, 3],
    ['non-partitioned', PLAIN, 0],
  ])('gives a %s topic an id at creation, the same on every read and by id', async (_kind, topic, partitions) => {
    const { admin } = fixture;
    const created = await admin.createTopic(topic, partitions);
    expect(created.topicId).toMatch(/^[0-9a-f]{32}$/);
    expect((await admin.getTopic(topic)).topicId).toBe(created.topicId);
    expect((await admin.getTopic(topic)).topicId).toBe(created.topicId);
    const byId = await admin.getTopicById(NS, bytes(created.topicId));
    expect(byId).toMatchObject({ name: topic, partitions, topicId: created.topicId });
  });

  it.each([
    ['partitioned', PARTITIONED, 2],
    ['non-partitioned', PLAIN, 0],
  ])('gives a %s topic deleted and created again a new id; the old one finds nothing', async (_kind, topic, n) => {
    const { admin } = fixture;
    const first = (await admin.createTopic(topic, n)).topicId!;
    await admin.deleteTopic(topic);
    expect((await failure(admin.getTopicById(NS, bytes(first)))).reason).toBe('TOPIC_NOT_FOUND');
    const second = (await admin.createTopic(topic, n)).topicId!;
    expect(second).not.toBe(first);
    expect((await admin.getTopic(topic)).topicId).toBe(second);
    expect((await failure(admin.getTopicById(NS, bytes(first)))).reason).toBe('TOPIC_NOT_FOUND');
    expect((await admin.getTopicById(NS, bytes(second))).name).toBe(topic);
  });

  it('gives a revived node (its ledgers still awaiting the collector) the new topic id', async () => {
    const { admin, store } = fixture;
    const first = (await admin.createTopic(PLAIN)).topicId!;
    // A ledger in the node: the delete marks it deletable and keeps the node for the collector.
    const node = await store.get(PLAIN_NODE);
    const info = fromBinary(ManagedLedgerInfoSchema, node!.value);
    info.ledgerInfo.push(create(LedgerInfoSchema, { ledgerId: 7n }));
    await store.put(PLAIN_NODE, toBinary(ManagedLedgerInfoSchema, info), { expectedVersion: node!.version });
    await admin.deleteTopic(PLAIN);
    expect(fromBinary(ManagedLedgerInfoSchema, (await store.get(PLAIN_NODE))!.value).state).toBe(
      ManagedLedgerState.DELETING,
    );
    const second = (await admin.createTopic(PLAIN)).topicId!;
    expect(second).not.toBe(first);
    expect((await admin.getTopic(PLAIN)).topicId).toBe(second);
  });

  it('gives topics created before ids existed one id, once, however many instances ask at once', async () => {
    const { admin, store, bus, clock } = fixture;
    await store.put(PARTITIONED_RECORD, encodeRecord({ partitions: 2, createdAtMs: 1 }));
    const legacyNode = create(ManagedLedgerInfoSchema, { state: ManagedLedgerState.ACTIVE });
    await store.put(PLAIN_NODE, toBinary(ManagedLedgerInfoSchema, legacyNode));
    const other = new MetadataAdmin(store, { bus, now: clock.now });
    for (const topic of [PARTITIONED, PLAIN]) {
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, index) => (index % 2 === 0 ? admin : other).getTopic(topic)),
      );
      const ids = new Set(answers.map((answer) => answer.topicId));
      expect(ids.size).toBe(1);
      const [topicId] = [...ids];
      expect(topicId).toMatch(/^[0-9a-f]{32}$/);
      expect((await admin.getTopic(topic)).topicId).toBe(topicId);
      expect((await other.getTopicById(NS, bytes(topicId))).name).toBe(topic);
    }
    // The ids of topics that had none are durable: the records hold them.
    expect(new TextDecoder().decode((await store.get(PARTITIONED_RECORD))!.value)).toContain('topicId');
    expect(await store.exists('/admin/topic-ids/tenant/ns/plain')).toBe(true);
  });

  it('forgets the id of a topic created before ids existed when it is deleted', async () => {
    const { admin, store } = fixture;
    await store.put(PLAIN_NODE, toBinary(ManagedLedgerInfoSchema, create(ManagedLedgerInfoSchema, {})));
    const legacy = (await admin.getTopic(PLAIN)).topicId!;
    await admin.deleteTopic(PLAIN);
    expect(await store.exists('/admin/topic-ids/tenant/ns/plain')).toBe(false);
    const created = (await admin.createTopic(PLAIN)).topicId!;
    expect(created).not.toBe(legacy);
    expect(fromBinary(ManagedLedgerInfoSchema, (await store.get(PLAIN_NODE))!.value).properties).toEqual([
      expect.objectContaining({ key: TOPIC_ID_PROPERTY, value: created }),
    ]);
  });

  it('refuses ids that are not 16 bytes or are all zero, and unknown ids are not found', async () => {
    const { admin } = fixture;
    expect((await failure(admin.getTopicById(NS, new Uint8Array(15)))).reason).toBe('INVALID_TOPIC_ID');
    expect((await failure(admin.getTopicById(NS, new Uint8Array(16)))).reason).toBe('INVALID_TOPIC_ID');
    const unknown = (await failure(admin.getTopicById(NS, new Uint8Array(16).fill(1)))) as { code?: string };
    expect(unknown).toMatchObject({ code: 'NOT_FOUND', reason: 'TOPIC_NOT_FOUND' });
  });

  it('removes an old index entry whose topic does not have its id, and keeps a young one', async () => {
    const { admin, store, clock } = fixture;
    const topicId = (await admin.createTopic(PLAIN)).topicId!;
    const stray = 'ab'.repeat(16);
    await store.put(`/admin/topic-id-index/tenant/ns/${stray}`, encodeRecord({ topic: PLAIN }));
    expect((await failure(admin.getTopicById(NS, bytes(stray)))).reason).toBe('TOPIC_NOT_FOUND');
    expect(await store.exists(`/admin/topic-id-index/tenant/ns/${stray}`)).toBe(true);
    clock.advance(61_000);
    expect((await failure(admin.getTopicById(NS, bytes(stray)))).reason).toBe('TOPIC_NOT_FOUND');
    expect(await store.exists(`/admin/topic-id-index/tenant/ns/${stray}`)).toBe(false);
    expect((await admin.getTopicById(NS, bytes(topicId))).name).toBe(PLAIN);
  });

  it('answers a topic of a reader namespace with its writer topic id, and finds it by id there', async () => {
    const { admin } = fixture;
    const topicId = (await admin.createTopic(PARTITIONED, 2)).topicId!;
    await admin.createNamespace('tenant/reader');
    await admin.setWriterNamespace('tenant/reader', NS);
    expect((await admin.getTopic('persistent://tenant/reader/orders')).topicId).toBe(topicId);
    expect((await admin.getTopicById('tenant/reader', bytes(topicId))).name).toBe('persistent://tenant/reader/orders');
  });
});
