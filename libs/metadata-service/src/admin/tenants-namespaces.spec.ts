import { NamespaceName } from '@ledgerline/naming';
import { WriteGate } from '../testing/crashing-store.js';
import { namespacePath } from '../records/layout.js';
import { encodeRecord } from '../records/record-codec.js';
import { MetadataAdmin } from '../metadata-admin.js';
import { failure, sqliteFixture, type SqliteFixture } from '../testing/spec-support.js';

describe('tenants and namespaces', () => {
  let fixture: SqliteFixture;
  beforeEach(() => {
    fixture = sqliteFixture({ recountSettleMs: 0 });
  });
  afterEach(async () => {
    await fixture.close();
  });

  it('creates, lists and deletes tenants', async () => {
    const { admin } = fixture;
    const created = await admin.createTenant('acme', ['ops', 'ops']);
    expect(created).toMatchObject({ name: 'acme', adminRoles: ['ops'] });
    await admin.createTenant('beta');
    expect(await admin.listTenants()).toEqual(['acme', 'beta']);
    expect(await failure(admin.createTenant('acme'))).toMatchObject({
      code: 'ALREADY_EXISTS',
      reason: 'TENANT_EXISTS',
    });
    await admin.deleteTenant('beta');
    expect(await admin.listTenants()).toEqual(['acme']);
    expect(await failure(admin.deleteTenant('beta'))).toMatchObject({ code: 'NOT_FOUND', reason: 'TENANT_NOT_FOUND' });
  });

  it('refuses bad tenant input with INVALID_ARGUMENT', async () => {
    const { admin } = fixture;
    expect(await failure(admin.createTenant('bad/name'))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      reason: 'INVALID_TENANT_NAME',
    });
    expect(await failure(admin.createTenant('..'))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      reason: 'INVALID_TENANT_NAME',
    });
    expect(await failure(admin.createTenant(''))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      reason: 'INVALID_TENANT_NAME',
    });
    const roles = Array.from({ length: 100 }, (_, index) => `role-${index}`);
    expect(await failure(admin.createTenant('acme', roles))).toMatchObject({ reason: 'INVALID_ADMIN_ROLES' });
  });

  it('creates namespaces with policies and keeps the bucket count fixed', async () => {
    const { admin } = fixture;
    await admin.createTenant('acme');
    const info = await admin.createNamespace('acme/orders', {
      numberOfTopicBuckets: 16,
      maxTopics: 100,
      retentionTimeMinutes: 60n,
      retentionSizeMb: -1n,
      ownerGroup: 'west',
    });
    expect(info.policies).toEqual({
      numberOfTopicBuckets: 16,
      maxTopics: 100,
      retentionTimeMinutes: 60,
      retentionSizeMb: -1,
      ownerGroup: 'west',
      writerNamespace: '',
      readonly: false,
      allowAutoTopicCreation: false,
    });
    const updated = await admin.updateNamespace('acme/orders', { maxTopics: 5, numberOfTopicBuckets: 16 });
    expect(updated.policies).toMatchObject({ maxTopics: 5, numberOfTopicBuckets: 16, ownerGroup: 'west' });
    expect(updated.version).toBeGreaterThan(info.version);
    const immutable = await failure(admin.updateNamespace('acme/orders', { numberOfTopicBuckets: 4 }));
    expect(immutable).toMatchObject({ code: 'FAILED_PRECONDITION', reason: 'BUCKETS_IMMUTABLE' });
    expect((await admin.getNamespace('acme/orders')).policies.numberOfTopicBuckets).toBe(16);
    expect(await admin.listNamespaces('acme')).toEqual(['acme/orders']);
  });

  it('reads a namespace record written before allowAutoTopicCreation existed as not allowing it', async () => {
    const { admin, store } = fixture;
    await admin.createTenant('acme');
    await admin.createNamespace('acme/old');
    const path = namespacePath(NamespaceName.parse('acme/old'));
    const node = (await store.get(path))!;
    const stored = JSON.parse(Buffer.from(node.value.subarray(2)).toString('utf8')) as {
      policies: Record<string, unknown>;
    };
    delete stored.policies['allowAutoTopicCreation'];
    await store.put(path, encodeRecord(stored), { expectedVersion: node.version });
    expect((await admin.getNamespace('acme/old')).policies.allowAutoTopicCreation).toBe(false);
    const updated = await admin.updateNamespace('acme/old', { allowAutoTopicCreation: true });
    expect(updated.policies.allowAutoTopicCreation).toBe(true);
    expect((await admin.getNamespace('acme/old')).policies.allowAutoTopicCreation).toBe(true);
  });

  it('lays the managed-ledger directories out as PIP-157 says', async () => {
    const { admin, store } = fixture;
    await admin.createTenant('tenant');
    await admin.createNamespace('tenant/namespace', { numberOfTopicBuckets: 3 });
    await admin.createNamespace('tenant/flat');
    expect((await store.children('/managed-ledgers/tenant/namespace/persistent')).names).toEqual(['$0', '$1', '$2']);
    expect(await store.exists('/managed-ledgers/tenant/flat/persistent')).toBe(true);
    expect((await store.children('/managed-ledgers/tenant/flat/persistent')).names).toEqual([]);
  });

  it('refuses bad namespace input with the right code and reason', async () => {
    const { admin } = fixture;
    await admin.createTenant('acme');
    const cases: [() => Promise<unknown>, string, string][] = [
      [() => admin.createNamespace('nobody/ns'), 'NOT_FOUND', 'TENANT_NOT_FOUND'],
      [() => admin.createNamespace('acme'), 'INVALID_ARGUMENT', 'INVALID_NAMESPACE_NAME'],
      [() => admin.createNamespace('acme/a b'), 'INVALID_ARGUMENT', 'INVALID_NAMESPACE_NAME'],
      [() => admin.createNamespace('acme/x', { numberOfTopicBuckets: 0 }), 'INVALID_ARGUMENT', 'INVALID_BUCKET_COUNT'],
      [
        () => admin.createNamespace('acme/x', { numberOfTopicBuckets: 5000 }),
        'INVALID_ARGUMENT',
        'INVALID_BUCKET_COUNT',
      ],
      [() => admin.createNamespace('acme/x', { maxTopics: -1 }), 'INVALID_ARGUMENT', 'INVALID_MAX_TOPICS'],
      [() => admin.createNamespace('acme/x', { retentionTimeMinutes: -2n }), 'INVALID_ARGUMENT', 'INVALID_RETENTION'],
      [() => admin.createNamespace('acme/x', { retentionSizeMb: 2n ** 62n }), 'INVALID_ARGUMENT', 'INVALID_RETENTION'],
      [
        () => admin.createNamespace('acme/x', { ownerGroup: 'g'.repeat(10_000) }),
        'INVALID_ARGUMENT',
        'INVALID_OWNER_GROUP',
      ],
      [() => admin.createNamespace('acme/x', { ownerGroup: 'a/b' }), 'INVALID_ARGUMENT', 'INVALID_OWNER_GROUP'],
      [
        () => admin.createNamespace('acme/x', { readonly: true }),
        'INVALID_ARGUMENT',
        'READONLY_NEEDS_WRITER_NAMESPACE',
      ],
      [() => admin.getNamespace('acme/none'), 'NOT_FOUND', 'NAMESPACE_NOT_FOUND'],
      [() => admin.listNamespaces('nobody'), 'NOT_FOUND', 'TENANT_NOT_FOUND'],
    ];
    for (const [call, code, reason] of cases) {
      expect(await failure(call())).toMatchObject({ code, reason });
    }
    expect(await admin.listNamespaces('acme')).toEqual([]);
  });

  it('refuses to delete a tenant with namespaces and a namespace with topics', async () => {
    const { admin, store } = fixture;
    await admin.createTenant('acme');
    await admin.createNamespace('acme/ns', { numberOfTopicBuckets: 4 });
    expect(await failure(admin.deleteTenant('acme'))).toMatchObject({
      code: 'FAILED_PRECONDITION',
      reason: 'TENANT_NOT_EMPTY',
    });
    await admin.createTopic('persistent://acme/ns/t1');
    expect(await failure(admin.deleteNamespace('acme/ns'))).toMatchObject({
      code: 'FAILED_PRECONDITION',
      reason: 'NAMESPACE_NOT_EMPTY',
    });
    // The refused delete left the namespace usable.
    await admin.createTopic('persistent://acme/ns/t2');
    await admin.deleteTopic('persistent://acme/ns/t1');
    await admin.deleteTopic('persistent://acme/ns/t2');
    await admin.deleteNamespace('acme/ns');
    expect(await store.exists('/managed-ledgers/acme/ns/persistent')).toBe(false);
    expect(await failure(admin.getNamespace('acme/ns'))).toMatchObject({ reason: 'NAMESPACE_NOT_FOUND' });
    await admin.deleteTenant('acme');
    expect(await admin.listTenants()).toEqual([]);
  });

  it('creates the same namespace once when two creators race', async () => {
    const { admin } = fixture;
    await admin.createTenant('acme');
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => admin.createNamespace('acme/race')));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    expect(await admin.countTopics('acme/race')).toBe(0);
  });

  it('undoes a reader flip that lands after its writer namespace was deleted', async () => {
    const { admin, store } = fixture;
    await admin.createTenant('acme');
    await admin.createNamespace('acme/writer');
    await admin.createNamespace('acme/reader');
    // The setter stalls right before it writes the reader's record; the writer is deleted meanwhile.
    const gate = new WriteGate(store, '/admin/namespaces/acme/reader');
    const setter = new MetadataAdmin(gate, { now: fixture.clock.now });
    const setting = failure(setter.setWriterNamespace('acme/reader', 'acme/writer'));
    await gate.reached;
    await admin.deleteNamespace('acme/writer');
    gate.open();
    expect(await setting).toMatchObject({ reason: 'NAMESPACE_NOT_FOUND' });
    expect((await admin.getNamespace('acme/reader')).policies).toMatchObject({ writerNamespace: '', readonly: false });
    await admin.createTopic('acme/reader/own');
  });
});
