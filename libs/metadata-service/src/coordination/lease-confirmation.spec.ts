import { MAX_LEASES_PER_CONFIRM } from '@ledgerline/metadata-contract';
import { failure, sqliteFixture, type SqliteFixture } from '../testing/spec-support.js';

describe('confirming many leases in one call', () => {
  let fixture: SqliteFixture;
  const topic = (name: string) => `persistent://my-tenant/ns/${name}`;
  beforeEach(async () => {
    fixture = sqliteFixture({ recountSettleMs: 0 });
    await fixture.admin.createTenant('my-tenant');
    await fixture.admin.createNamespace('my-tenant/ns', { ownerGroup: 'writers' });
    for (const name of ['a', 'b', 'c', 'd']) await fixture.admin.createTopic(topic(name));
  });
  afterEach(async () => {
    await fixture.close();
  });

  const register = (instanceId: string) =>
    fixture.admin.registerOwner(
      { instanceId, group: 'writers', role: 'writer', advertisedAddress: `${instanceId}:6650` },
      60_000,
    );

  it('answers only the topics whose lease the session lost, with why', async () => {
    const { admin } = fixture;
    const mine = await register('w-1');
    const other = await register('w-2');
    for (const name of ['a', 'b', 'c']) await admin.acquireLease(topic(name), mine.sessionId);
    // c moves to the other owner, d was never ours, e does not exist, f is in a namespace that does not.
    await admin.transferLease(topic('c'), mine.sessionId, 'w-2');
    await admin.acquireLease(topic('c'), other.sessionId);
    const gone = 'persistent://my-tenant/gone/f';
    const lost = await admin.confirmLeases(mine.sessionId, [...['a', 'b', 'c', 'd', 'e'].map(topic), gone]);
    expect(lost).toEqual([
      { topic: topic('c'), reason: 'LEASE_LOST', message: expect.stringContaining('no longer holds the lease') },
      { topic: topic('d'), reason: 'LEASE_LOST', message: expect.any(String) },
      { topic: topic('e'), reason: 'LEASE_LOST', message: expect.any(String) },
      { topic: gone, reason: 'NAMESPACE_NOT_FOUND', message: expect.stringContaining('my-tenant/gone') },
    ]);
    expect(await admin.confirmLeases(other.sessionId, [topic('c')])).toEqual([]);
    expect(await admin.confirmLeases(mine.sessionId, [])).toEqual([]);
  });

  it('keeps no session alive: a session that stops its keep-alives expires although its leases are confirmed', async () => {
    const { admin, clock } = fixture;
    const mine = await register('w-1');
    await admin.acquireLease(topic('a'), mine.sessionId);
    clock.advance(40_000);
    expect(await admin.confirmLeases(mine.sessionId, [topic('a')])).toEqual([]);
    // 70 s after the registration: a renewal at 40 s would have kept the session to 100 s.
    clock.advance(30_000);
    expect(await failure(admin.confirmLeases(mine.sessionId, [topic('a')]))).toMatchObject({
      code: 'NOT_FOUND',
      reason: 'SESSION_EXPIRED',
    });
  });

  it('refuses more topics than a call may carry, and names that are not topics, before reading any lease', async () => {
    const { admin } = fixture;
    const mine = await register('w-1');
    const tooMany = Array.from({ length: MAX_LEASES_PER_CONFIRM + 1 }, (_, i) => topic(`t${i}`));
    expect(await failure(admin.confirmLeases(mine.sessionId, tooMany))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      reason: 'BATCH_TOO_LARGE',
      message: expect.stringContaining(`at most ${MAX_LEASES_PER_CONFIRM}`),
    });
    expect(await failure(admin.confirmLeases(mine.sessionId, ['not a topic//']))).toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    expect(await failure(admin.confirmLeases('not-a-session', [topic('a')]))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      reason: 'INVALID_SESSION_ID',
    });
  });
});
