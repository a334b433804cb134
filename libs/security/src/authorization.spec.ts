import { refusal } from '@ledgerline/testing';
import { LedgerlineError } from '@ledgerline/errors';
import { authorizeRole, CachedPolicySource, type AuthPolicies, type PolicySource } from './authorization.js';
import { requiredAccess } from './method-access.js';
import { SecurityReason } from './security-reason.js';

const TOPIC = 'persistent://acme/orders/payments';
/** What the metadata service answers for a namespace that does not exist. */
const NAMESPACE_NOT_FOUND = 'NAMESPACE_NOT_FOUND';

class FakePolicies implements PolicySource {
  reads = 0;
  namespaces = new Map<string, AuthPolicies>();
  tenants = new Map<string, string[]>();
  async namespacePolicies(namespace: string): Promise<AuthPolicies> {
    this.reads++;
    const found = this.namespaces.get(namespace);
    if (found === undefined) throw new LedgerlineError('NOT_FOUND', NAMESPACE_NOT_FOUND, `no ${namespace}`);
    return found;
  }
  async tenantAdminRoles(tenant: string): Promise<string[]> {
    return this.tenants.get(tenant) ?? [];
  }
}

describe('authorization', () => {
  let policies: FakePolicies;
  beforeEach(() => {
    policies = new FakePolicies();
    policies.namespaces.set('acme/orders', {
      permissions: { app: ['produce'], reader: ['consume'] },
      tenantAdminRoles: ['acme-admin'],
    });
    policies.tenants.set('acme', ['acme-admin']);
  });
  const check = async (role: string, method: string, request: unknown) =>
    authorizeRole(role, requiredAccess(method, request), ['root'], policies);

  it('needs produce to publish and consume to subscribe, naming the missing permission', async () => {
    await expect(
      check('app', '/ledgerline.v1.TopicsService/PublishOne', { message: { topic: TOPIC } }),
    ).resolves.toBeUndefined();
    const subscribe = { command: { case: 'subscribe', value: { topic: TOPIC } } };
    const error = await refusal(check('app', '/ledgerline.v1.TopicsService/Consume', subscribe));
    expect(error).toMatchObject({ code: 'PERMISSION_DENIED', reason: SecurityReason.PERMISSION_NOT_GRANTED });
    expect(error.message).toContain('consume');
    await expect(check('reader', '/ledgerline.v1.TopicsService/Consume', subscribe)).resolves.toBeUndefined();
    await expect(
      check('reader', '/ledgerline.v1.TopicsService/Consume', { command: { case: 'flow', value: {} } }),
    ).resolves.toBeUndefined();
    await expect(
      check('reader', '/ledgerline.v1.TopicsService/FetchByOffset', { topic: TOPIC }),
    ).resolves.toBeUndefined();
    await expect(check('app', '/ledgerline.v1.LookupService/LookupTopic', { topic: TOPIC })).resolves.toBeUndefined();
  });

  it('checks every topic a coalesced Publish request names, not only its first', async () => {
    policies.namespaces.set('globex/secret', { permissions: {}, tenantAdminRoles: [] });
    const publish = '/ledgerline.v1.TopicsService/Publish';
    const own = { message: { topic: TOPIC }, more: [{ topic: `${TOPIC}-2` }, { topic: TOPIC }] };
    await expect(check('app', publish, own)).resolves.toBeUndefined();
    expect(requiredAccess(publish, own)).toHaveLength(1);
    const smuggled = { message: { topic: TOPIC }, more: [{ topic: 'persistent://globex/secret/t' }] };
    expect(await refusal(check('app', publish, smuggled))).toMatchObject({
      code: 'PERMISSION_DENIED',
      reason: SecurityReason.PERMISSION_NOT_GRANTED,
    });
  });

  it("lets a tenant's admins administer its namespaces, not another tenant's, and keeps tenants for super-users", async () => {
    await expect(
      check('acme-admin', '/ledgerline.v1.AdminService/CreateNamespace', { namespace: 'acme/new' }),
    ).resolves.toBeUndefined();
    await expect(
      check('acme-admin', '/ledgerline.v1.TopicsService/PublishOne', { message: { topic: TOPIC } }),
    ).resolves.toBeUndefined();
    expect(
      await refusal(check('acme-admin', '/ledgerline.v1.AdminService/CreateNamespace', { namespace: 'globex/x' })),
    ).toMatchObject({
      reason: SecurityReason.TENANT_ADMIN_REQUIRED,
    });
    expect(
      await refusal(check('acme-admin', '/ledgerline.v1.AdminService/CreateTenant', { tenant: 'x' })),
    ).toMatchObject({
      reason: SecurityReason.SUPER_USER_REQUIRED,
    });
    expect(await refusal(check('acme-admin', '/ledgerline.v1.Unknown/Method', {}))).toMatchObject({
      reason: SecurityReason.SUPER_USER_REQUIRED,
    });
    await expect(check('root', '/ledgerline.v1.AdminService/CreateTenant', { tenant: 'x' })).resolves.toBeUndefined();
  });

  it("lets the topic's tenant admin delete its records (Kafka's DeleteRecords), not its producers or consumers", async () => {
    const deleteRecords = '/ledgerline.v1.TopicsService/DeleteRecords';
    await expect(check('acme-admin', deleteRecords, { topic: TOPIC, beforeOffset: 5n })).resolves.toBeUndefined();
    for (const role of ['app', 'reader']) {
      expect(await refusal(check(role, deleteRecords, { topic: TOPIC, beforeOffset: 5n }))).toMatchObject({
        code: 'PERMISSION_DENIED',
        reason: SecurityReason.TENANT_ADMIN_REQUIRED,
      });
    }
  });

  it('lets a role that may produce or consume on a namespace find its topics by id, and no other role', async () => {
    const byId = '/ledgerline.v1.AdminService/GetTopicById';
    const request = { namespace: 'acme/orders', topicId: new Uint8Array(16).fill(1) };
    for (const role of ['app', 'reader', 'acme-admin', 'root']) {
      await expect(check(role, byId, request)).resolves.toBeUndefined();
    }
    expect(await refusal(check('other', byId, request))).toMatchObject({ code: 'PERMISSION_DENIED' });
    expect(await refusal(check('app', byId, { ...request, namespace: 'not a namespace' }))).toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });

  it("lets a role that may consume on a namespace keep its Kafka groups' index there, as their commits need, and no other", async () => {
    const calls: [string, Record<string, unknown>][] = [
      ['AddKafkaGroupPartition', { topic: `${TOPIC}-partition-0`, group: 'billing' }],
      ['GetKafkaGroupIndex', { namespace: 'acme/orders', group: 'billing' }],
      ['UpdateKafkaGroupIndex', { namespace: 'acme/orders', group: 'billing', removeTopics: [] }],
      ['DeleteKafkaGroupIndex', { namespace: 'acme/orders', group: 'billing', expectedVersion: 1n }],
    ];
    for (const [method, request] of calls) {
      const path = `/ledgerline.v1.AdminService/${method}`;
      for (const role of ['reader', 'acme-admin', 'root'])
        await expect(check(role, path, request)).resolves.toBeUndefined();
      for (const role of ['app', 'other']) {
        expect(await refusal(check(role, path, request))).toMatchObject({ code: 'PERMISSION_DENIED' });
      }
    }
    const bad = { namespace: 'not a namespace', group: 'billing' };
    expect(await refusal(check('reader', '/ledgerline.v1.AdminService/GetKafkaGroupIndex', bad))).toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });

  it('refuses a topic of a missing namespace exactly as one the role may not use', async () => {
    const missing = await refusal(
      check('app', '/ledgerline.v1.AdminService/GetTopic', { topic: 'persistent://acme/nowhere/t' }),
    );
    const existing = await refusal(check('other', '/ledgerline.v1.AdminService/GetTopic', { topic: TOPIC }));
    expect([missing.code, missing.reason]).toEqual([existing.code, existing.reason]);
  });

  it('answers a bad topic name with INVALID_ARGUMENT, as the handler would', async () => {
    expect(
      (
        await refusal(
          check('app', '/ledgerline.v1.TopicsService/PublishOne', { message: { topic: 'persistent://acme' } }),
        )
      ).code,
    ).toBe('INVALID_ARGUMENT');
  });

  it('remembers policies for the cache bound, then sees a change', async () => {
    let now = 1_000;
    const cached = new CachedPolicySource(policies, 5_000, () => now);
    const allowed = () =>
      authorizeRole(
        'late',
        requiredAccess('/ledgerline.v1.TopicsService/PublishOne', { message: { topic: TOPIC } }),
        [],
        cached,
      );
    expect((await refusal(allowed())).reason).toBe(SecurityReason.PERMISSION_NOT_GRANTED);
    policies.namespaces.set('acme/orders', { permissions: { late: ['produce'] }, tenantAdminRoles: [] });
    expect((await refusal(allowed())).reason).toBe(SecurityReason.PERMISSION_NOT_GRANTED);
    expect(policies.reads).toBe(1);
    now += 5_001;
    await expect(allowed()).resolves.toBeUndefined();
    expect(policies.reads).toBe(2);
  });
});
