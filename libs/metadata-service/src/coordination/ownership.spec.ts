import { failure, sqliteFixture, type SqliteFixture } from '../testing/spec-support.js';
import type { OwnerRoleName } from '../records/records.js';

describe('owners, leases and lookup', () => {
  let fixture: SqliteFixture;
  beforeEach(async () => {
    fixture = sqliteFixture({ recountSettleMs: 0 });
    const { admin } = fixture;
    await admin.createTenant('my-tenant');
    await admin.createNamespace('my-tenant/writer-namespace', { numberOfTopicBuckets: 4, ownerGroup: 'writers' });
    await admin.createTopic('persistent://my-tenant/writer-namespace/topic');
  });
  afterEach(async () => {
    await fixture.close();
  });

  // Long TTLs and a clock moved by tens of seconds: the outcome never depends on how fast the machine is.
  const register = (instanceId: string, group: string, role: OwnerRoleName = 'writer', ttlMs = 60_000) =>
    fixture.admin.registerOwner({ instanceId, group, role, advertisedAddress: `${instanceId}:6650` }, ttlMs);

  it('hands a lapsed lease to another owner of the group', async () => {
    const { admin, clock } = fixture;
    const topic = 'persistent://my-tenant/writer-namespace/topic';
    const first = await register('broker-1', 'writers');
    const second = await register('broker-2', 'writers');
    const lease = await admin.acquireLease(topic, first.sessionId);
    expect(lease).toMatchObject({ instanceId: 'broker-1', advertisedAddress: 'broker-1:6650' });
    expect(await admin.acquireLease(topic, first.sessionId)).toMatchObject({ version: lease.version });
    expect(await failure(admin.acquireLease(topic, second.sessionId))).toMatchObject({
      code: 'FAILED_PRECONDITION',
      reason: 'LEASE_HELD',
    });
    expect(await admin.lookupTopic(topic)).toMatchObject({ instanceId: 'broker-1', owned: true, redirectTopic: '' });

    // broker-1 stops keeping its session alive; broker-2 does.
    clock.advance(40_000);
    await admin.keepAliveOwner(second.sessionId);
    clock.advance(40_000);
    expect(await admin.getLease(topic)).toBeUndefined();
    expect(await admin.lookupTopic(topic)).toMatchObject({ instanceId: 'broker-2', owned: false });
    const takeover = await admin.acquireLease(topic, second.sessionId);
    expect(takeover.instanceId).toBe('broker-2');
    expect(takeover.version).toBeGreaterThan(lease.version);
    expect(await failure(admin.renewLease(topic, first.sessionId))).toMatchObject({
      code: 'NOT_FOUND',
      reason: 'SESSION_EXPIRED',
    });
    expect(await admin.renewLease(topic, second.sessionId)).toMatchObject({ instanceId: 'broker-2' });
    expect((await admin.listOwners('writers')).map((owner) => owner.instanceId)).toEqual(['broker-2']);
    expect((await admin.listOwners('', 'writer')).map((owner) => owner.instanceId)).toEqual(['broker-2']);

    await admin.releaseLease(topic, second.sessionId);
    expect(await admin.getLease(topic)).toBeUndefined();
    const again = await admin.acquireLease(topic, second.sessionId);
    expect(again.version).toBeGreaterThan(takeover.version);
  });

  it('only lets instances of the right group and role own a topic', async () => {
    const { admin } = fixture;
    const topic = 'my-tenant/writer-namespace/topic';
    const stranger = await register('other-1', 'others');
    const reader = await register('reader-1', 'writers', 'readonly');
    // A Kafka gateway registers so that gateways find each other; it never serves a topic.
    const gateway = await register('kafka-1-gateway-1:9092', 'writers', 'kafka-gateway');
    expect(await failure(admin.acquireLease(topic, stranger.sessionId))).toMatchObject({ reason: 'WRONG_OWNER_GROUP' });
    expect(await failure(admin.acquireLease(topic, reader.sessionId))).toMatchObject({ reason: 'WRONG_OWNER_ROLE' });
    expect(await failure(admin.acquireLease(topic, gateway.sessionId))).toMatchObject({ reason: 'WRONG_OWNER_ROLE' });
    expect((await admin.listOwners('writers', 'kafka-gateway')).map((owner) => owner.instanceId)).toEqual([
      'kafka-1-gateway-1:9092',
    ]);
    expect(await failure(admin.lookupTopic(topic))).toMatchObject({ code: 'UNAVAILABLE', reason: 'NO_LIVE_OWNER' });
    expect(await failure(admin.acquireLease('my-tenant/writer-namespace/none', stranger.sessionId))).toMatchObject({
      reason: 'TOPIC_NOT_FOUND',
    });
  });

  it('spreads unowned topics over the live owners by rendezvous hashing', async () => {
    const { admin } = fixture;
    const names = Array.from({ length: 300 }, (_, index) => `my-tenant/writer-namespace/spread-${index}`);
    await admin.createTopics(names);
    for (const id of ['b-1', 'b-2', 'b-3']) await register(id, 'writers');
    const picks = await Promise.all(names.map((name) => admin.lookupTopic(name)));
    const perOwner = new Map<string, number>();
    for (const pick of picks) perOwner.set(pick.instanceId, (perOwner.get(pick.instanceId) ?? 0) + 1);
    expect([...perOwner.keys()].sort()).toEqual(['b-1', 'b-2', 'b-3']);
    for (const count of perOwner.values()) expect(count).toBeGreaterThan(60);
    // Stable: asking again gives the same answers.
    const again = await Promise.all(names.map((name) => admin.lookupTopic(name)));
    expect(again.map((pick) => pick.instanceId)).toEqual(picks.map((pick) => pick.instanceId));
  });

  it('redirects a lookup through a reader group to a read-only owner of the reader namespace (PIP-63)', async () => {
    const { admin } = fixture;
    await admin.createNamespace('my-tenant/reader-namespace', { ownerGroup: 'readers' });
    const reader = await admin.setWriterNamespace('my-tenant/reader-namespace', 'my-tenant/writer-namespace');
    expect(reader.policies).toMatchObject({ writerNamespace: 'my-tenant/writer-namespace', readonly: true });
    await register('broker-2', 'writers');
    await register('broker-3', 'readers', 'readonly');

    const redirected = await admin.lookupTopic('persistent://my-tenant/writer-namespace/topic', 'readers');
    expect(redirected).toEqual({
      instanceId: 'broker-3',
      advertisedAddress: 'broker-3:6650',
      role: 'readonly',
      redirectTopic: 'persistent://my-tenant/reader-namespace/topic',
      owned: false,
    });
    const direct = await admin.lookupTopic('persistent://my-tenant/writer-namespace/topic', 'writers');
    expect(direct).toMatchObject({ instanceId: 'broker-2', role: 'writer', redirectTopic: '' });
    expect(await admin.lookupTopic('persistent://my-tenant/writer-namespace/topic')).toMatchObject({
      instanceId: 'broker-2',
    });

    // The reader namespace shows the writer's topics and refuses writes.
    expect((await admin.listTopics('my-tenant/reader-namespace')).topics).toEqual([
      'persistent://my-tenant/reader-namespace/topic',
    ]);
    expect(await admin.countTopics('my-tenant/reader-namespace')).toBe(1);
    expect(await failure(admin.createTopic('my-tenant/reader-namespace/new'))).toMatchObject({
      code: 'FAILED_PRECONDITION',
      reason: 'NAMESPACE_READONLY',
    });
    expect(await failure(admin.deleteTopic('my-tenant/reader-namespace/topic'))).toMatchObject({
      reason: 'NAMESPACE_READONLY',
    });
    expect((await admin.createTopics(['my-tenant/reader-namespace/new']))[0]).toMatchObject({
      errorReason: 'NAMESPACE_READONLY',
    });
  });

  it('enforces the PIP-63 rules on writer namespaces', async () => {
    const { admin } = fixture;
    await admin.createNamespace('my-tenant/reader', { ownerGroup: 'readers' });
    await admin.createNamespace('my-tenant/busy');
    await admin.createNamespace('my-tenant/empty');
    await admin.createTopic('my-tenant/busy/own');
    await admin.setWriterNamespace('my-tenant/reader', 'my-tenant/writer-namespace');
    const cases: [() => Promise<unknown>, string][] = [
      [() => admin.setWriterNamespace('my-tenant/reader', 'my-tenant/none'), 'NAMESPACE_NOT_FOUND'],
      [() => admin.setWriterNamespace('my-tenant/empty', 'my-tenant/reader'), 'WRITER_IS_READER'],
      [() => admin.setWriterNamespace('my-tenant/writer-namespace', 'my-tenant/busy'), 'NAMESPACE_IS_WRITER'],
      [() => admin.setWriterNamespace('my-tenant/busy', 'my-tenant/writer-namespace'), 'NAMESPACE_NOT_EMPTY'],
      [() => admin.setWriterNamespace('my-tenant/reader', 'my-tenant/reader'), 'WRITER_IS_SELF'],
      [() => admin.deleteNamespace('my-tenant/writer-namespace'), 'NAMESPACE_HAS_READERS'],
      [() => admin.updateNamespace('my-tenant/reader', { readonly: false }), 'READONLY_FOLLOWS_WRITER_NAMESPACE'],
    ];
    for (const [call, reason] of cases) expect(await failure(call())).toMatchObject({ reason });
    const cleared = await admin.setWriterNamespace('my-tenant/reader', '');
    expect(cleared.policies).toMatchObject({ writerNamespace: '', readonly: false });
    await admin.deleteTopic('my-tenant/writer-namespace/topic');
    await admin.deleteNamespace('my-tenant/writer-namespace');
  });

  it('validates registrations, sessions and lookups', async () => {
    const { admin } = fixture;
    const good = { instanceId: 'i-1', group: 'writers', role: 'writer' as const, advertisedAddress: 'h:1' };
    const cases: [() => Promise<unknown>, string][] = [
      [() => admin.registerOwner({ ...good, instanceId: 'a/b' }, 1000), 'INVALID_INSTANCE_ID'],
      [() => admin.registerOwner({ ...good, group: '' }, 1000), 'INVALID_OWNER_GROUP'],
      [() => admin.registerOwner({ ...good, advertisedAddress: '' }, 1000), 'INVALID_ADVERTISED_ADDRESS'],
      [() => admin.registerOwner(good, 10), 'INVALID_SESSION_TTL'],
      [() => admin.registerOwner(good, 10 * 60_000), 'INVALID_SESSION_TTL'],
      [() => admin.keepAliveOwner('not-a-session'), 'INVALID_SESSION_ID'],
      [() => admin.keepAliveOwner('00000000-0000-0000-0000-000000000000'), 'SESSION_EXPIRED'],
      [() => admin.lookupTopic('my-tenant/writer-namespace/none'), 'TOPIC_NOT_FOUND'],
      [() => admin.lookupTopic('my-tenant/writer-namespace/topic', 'bad group'), 'INVALID_OWNER_GROUP'],
    ];
    for (const [call, reason] of cases) expect(await failure(call())).toMatchObject({ reason });
    await admin.createTopic('my-tenant/writer-namespace/parted', 2);
    expect(await failure(admin.lookupTopic('my-tenant/writer-namespace/parted'))).toMatchObject({
      reason: 'TOPIC_IS_PARTITIONED',
    });
    const session = await admin.registerOwner(good, 1000);
    await admin.unregisterOwner(session.sessionId);
    expect(await admin.listOwners('writers')).toEqual([]);
  });

  it('allocates unique increasing ledger ids', async () => {
    const ids = await Promise.all(Array.from({ length: 50 }, () => fixture.admin.allocateLedgerId()));
    expect(new Set(ids).size).toBe(50);
    const next = await fixture.admin.allocateLedgerId();
    expect(next).toBeGreaterThan(Math.max(...ids));
  });
});
