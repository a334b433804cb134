import { failure, sqliteFixture, type SqliteFixture } from '../testing/spec-support.js';

describe('lease transfers', () => {
  let fixture: SqliteFixture;
  const topic = 'persistent://my-tenant/ns/topic';
  beforeEach(async () => {
    fixture = sqliteFixture({ recountSettleMs: 0 });
    await fixture.admin.createTenant('my-tenant');
    await fixture.admin.createNamespace('my-tenant/ns', { ownerGroup: 'writers' });
    await fixture.admin.createTopic(topic);
  });
  afterEach(async () => {
    await fixture.close();
  });

  const register = (instanceId: string, group = 'writers', role: 'writer' | 'readonly' = 'writer') =>
    fixture.admin.registerOwner({ instanceId, group, role, advertisedAddress: `${instanceId}:6650` }, 60_000);

  it('hands the lease to the target at once; the target takes it up and the source can no longer reclaim it', async () => {
    const { admin } = fixture;
    const source = await register('a');
    const target = await register('b');
    const held = await admin.acquireLease(topic, source.sessionId);
    const handed = await admin.transferLease(topic, source.sessionId, 'b');
    expect(handed).toMatchObject({ instanceId: 'b', advertisedAddress: 'b:6650' });
    expect(handed.version).toBeGreaterThan(held.version);
    // Lookups name the target straight away: nobody waits for the source's lease to lapse.
    expect(await admin.lookupTopic(topic)).toMatchObject({ instanceId: 'b', owned: true });
    expect(await failure(admin.renewLease(topic, source.sessionId))).toMatchObject({ reason: 'LEASE_LOST' });
    const takenUp = await admin.acquireLease(topic, target.sessionId);
    expect(takenUp.version).toBeGreaterThan(handed.version);
    expect(await failure(admin.reclaimLease(topic, source.sessionId, handed.version))).toMatchObject({
      code: 'FAILED_PRECONDITION',
      reason: 'LEASE_TAKEN_UP',
      details: { instanceId: 'b', advertisedAddress: 'b:6650' },
    });
    expect(await admin.renewLease(topic, target.sessionId)).toMatchObject({ instanceId: 'b' });
  });

  it('reads the lease again when it changed between the read beside the checks and the compare-and-set', async () => {
    const { admin, store } = fixture;
    const source = await register('a');
    await register('b');
    await admin.acquireLease(topic, source.sessionId);
    const leaseNode = '/leases/my-tenant/ns/topic';
    const get = store.get.bind(store);
    let leaseReads = 0;
    jest.spyOn(store, 'get').mockImplementation(async (path) => {
      const node = await get(path);
      // The first read is the one made beside the topic's checks: the node moves on right after it.
      if (path === leaseNode && ++leaseReads === 1)
        await store.put(path, node!.value, { expectedVersion: node!.version });
      return node;
    });
    const handed = await admin.transferLease(topic, source.sessionId, 'b');
    expect(handed).toMatchObject({ instanceId: 'b' });
    expect(leaseReads).toBe(2);
  });

  it('reports a session that is gone before a topic that is missing, though both are read side by side', async () => {
    const { admin } = fixture;
    await register('b');
    const gone = '00000000-0000-4000-8000-000000000000';
    const missing = 'persistent://my-tenant/ns/no-such-topic';
    expect(await failure(admin.transferLease(missing, gone, 'b'))).toMatchObject({ reason: 'SESSION_EXPIRED' });
    expect(await failure(admin.acquireLease(missing, gone))).toMatchObject({ reason: 'SESSION_EXPIRED' });
  });

  it('lets the source reclaim a lease its target never took up, and then the target cannot take it', async () => {
    const { admin } = fixture;
    const source = await register('a');
    const target = await register('b');
    await admin.acquireLease(topic, source.sessionId);
    const handed = await admin.transferLease(topic, source.sessionId, 'b');
    const reclaimed = await admin.reclaimLease(topic, source.sessionId, handed.version);
    expect(reclaimed).toMatchObject({ instanceId: 'a' });
    expect(await admin.lookupTopic(topic)).toMatchObject({ instanceId: 'a', owned: true });
    expect(await failure(admin.acquireLease(topic, target.sessionId))).toMatchObject({ reason: 'LEASE_HELD' });
    // A second reclaim of the same hand-over is refused: the version moved.
    expect(await failure(admin.reclaimLease(topic, source.sessionId, handed.version))).toMatchObject({
      reason: 'LEASE_TAKEN_UP',
    });
  });

  it('refuses transfers from a non-holder, to itself, to a dead, draining or foreign owner', async () => {
    const { admin, clock } = fixture;
    const source = await register('a');
    const other = await register('b');
    await register('x', 'others');
    await admin.acquireLease(topic, source.sessionId);
    expect(await failure(admin.transferLease(topic, other.sessionId, 'a'))).toMatchObject({ reason: 'LEASE_LOST' });
    expect(await failure(admin.transferLease(topic, source.sessionId, 'a'))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      reason: 'TRANSFER_TO_SELF',
    });
    expect(await failure(admin.transferLease(topic, source.sessionId, 'nobody'))).toMatchObject({
      code: 'FAILED_PRECONDITION',
      reason: 'NO_LIVE_OWNER',
    });
    // The other group's owner is not in the holder's group: not found there.
    expect(await failure(admin.transferLease(topic, source.sessionId, 'x'))).toMatchObject({
      reason: 'NO_LIVE_OWNER',
    });
    await admin.setOwnerDraining(other.sessionId, true);
    expect(await failure(admin.transferLease(topic, source.sessionId, 'b'))).toMatchObject({
      reason: 'NO_LIVE_OWNER',
      message: expect.stringContaining('draining'),
    });
    // With no other owner that is not draining, a transfer without a target has nowhere to go...
    expect(await failure(admin.transferLease(topic, source.sessionId, ''))).toMatchObject({
      code: 'UNAVAILABLE',
      reason: 'NO_LIVE_OWNER',
    });
    // ...and once b takes topics again, it is the placement's choice.
    await admin.setOwnerDraining(other.sessionId, false);
    expect(await admin.transferLease(topic, source.sessionId, '')).toMatchObject({ instanceId: 'b' });
    clock.advance(120_000);
    expect(await failure(admin.setOwnerDraining(other.sessionId, true))).toMatchObject({ reason: 'SESSION_EXPIRED' });
  });

  it('places no unleased topic on a draining owner unless every owner is draining', async () => {
    const { admin } = fixture;
    const owners = await Promise.all(['a', 'b', 'c'].map((id) => register(id)));
    const first = (await admin.lookupTopic(topic)).instanceId;
    const drained = owners[['a', 'b', 'c'].indexOf(first)]!;
    await admin.setOwnerDraining(drained.sessionId, true);
    const second = (await admin.lookupTopic(topic)).instanceId;
    expect(second).not.toBe(first);
    for (const owner of owners) await admin.setOwnerDraining(owner.sessionId, true);
    expect(['a', 'b', 'c']).toContain((await admin.lookupTopic(topic)).instanceId);
    // A restarted owner registers afresh and is no longer draining.
    const again = await register(first);
    expect((await admin.listOwners('writers')).find((o) => o.instanceId === first)?.draining).toBeUndefined();
    expect(again.owner.draining).toBeUndefined();
  });
});
