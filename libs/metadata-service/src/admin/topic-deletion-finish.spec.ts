import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { decodePendingDeletionEntry, pendingDeletionEntryPath } from '@ledgerline/ledger-info';
import { LedgerInfoSchema, ManagedLedgerInfoSchema } from '@ledgerline/proto';
import { deletingTopicPath } from '../records/layout.js';
import { failure, sqliteFixture, type SqliteFixture } from '../testing/spec-support.js';
import { TopicName } from '@ledgerline/naming';

const TOPIC = 'persistent://tenant/ns/orders';
const PATH = '/managed-ledgers/tenant/ns/persistent/orders';

describe('finishing a topic deletion (the garbage collector)', () => {
  let fixture: SqliteFixture;
  beforeEach(async () => {
    fixture = sqliteFixture({ recountSettleMs: 0 });
    await fixture.admin.createTenant('tenant');
    await fixture.admin.createNamespace('tenant/ns', {});
    await fixture.admin.createTopic(TOPIC);
    const info = create(ManagedLedgerInfoSchema, { ledgerInfo: [create(LedgerInfoSchema, { ledgerId: 7n })] });
    const node = await fixture.store.get(PATH);
    await fixture.store.put(PATH, toBinary(ManagedLedgerInfoSchema, info), { expectedVersion: node!.version });
  });
  afterEach(async () => {
    await fixture.close();
  });

  /** What the collector does once the ledgers are gone: drop the markers by compare-and-set. */
  async function clearMarkers(): Promise<number> {
    const node = await fixture.store.get(PATH);
    const info = fromBinary(ManagedLedgerInfoSchema, node!.value);
    info.deletableLedgers = [];
    return fixture.store.put(PATH, toBinary(ManagedLedgerInfoSchema, info), { expectedVersion: node!.version });
  }

  it('indexes the topic before marking it, then removes node and record; the count was released at deletion', async () => {
    const { admin, store } = fixture;
    expect(await admin.deleteTopic(TOPIC)).toEqual([7n]);
    const entry = await store.get(pendingDeletionEntryPath(PATH));
    expect(decodePendingDeletionEntry(entry!.value).managedLedgerPath).toBe(PATH);
    expect(await admin.countTopics('tenant/ns')).toBe(0);
    const version = await clearMarkers();
    expect(await admin.finishTopicDeletion(PATH, version)).toBe('removed');
    expect(await store.get(PATH)).toBeUndefined();
    expect(await store.exists(deletingTopicPath(TopicName.parse(TOPIC)))).toBe(false);
    expect(await admin.countTopics('tenant/ns')).toBe(0);
    expect(await admin.finishTopicDeletion(PATH, version)).toBe('missing');
  });

  it('leaves a topic re-created with the same name alone', async () => {
    const { admin, store } = fixture;
    await admin.deleteTopic(TOPIC);
    const version = await clearMarkers();
    await admin.createTopic(TOPIC);
    expect(await admin.finishTopicDeletion(PATH, version)).toBe('changed');
    expect((await admin.getTopic(TOPIC)).managedLedgerPath).toBe(PATH);
    expect(await admin.countTopics('tenant/ns')).toBe(1);
    expect(await store.exists(PATH)).toBe(true);
  });

  it('refuses a node that still has markers or is live, and a path that is not a managed ledger', async () => {
    const { admin, store } = fixture;
    const live = await store.get(PATH);
    expect((await failure(admin.finishTopicDeletion(PATH, live!.version))).reason).toBe('TOPIC_DELETION_UNFINISHED');
    await admin.deleteTopic(TOPIC);
    const marked = await store.get(PATH);
    const info = fromBinary(ManagedLedgerInfoSchema, marked!.value);
    expect(info.deletableLedgers.map((ledger) => ledger.ledgerId)).toEqual([7n]);
    expect((await failure(admin.finishTopicDeletion(PATH, marked!.version))).reason).toBe('TOPIC_DELETION_UNFINISHED');
    expect((await failure(admin.finishTopicDeletion('/admin/tenants/tenant', 1))).reason).toBe(
      'INVALID_MANAGED_LEDGER_PATH',
    );
  });
});
