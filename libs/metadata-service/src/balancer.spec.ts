import { Balancer, readBalancerStatus } from './balancer.js';
import { sqliteFixture, type SqliteFixture } from './testing/spec-support.js';

describe('the balancer in the metadata service', () => {
  let fixture: SqliteFixture;
  beforeEach(async () => {
    fixture = sqliteFixture({ recountSettleMs: 0 });
    await fixture.admin.createTenant('t');
    await fixture.admin.createNamespace('t/ns', {});
  });
  afterEach(async () => {
    await fixture.close();
  });

  it('runs one at a time, sees every live lease, and records what it decided and why', async () => {
    const { admin, clock } = fixture;
    const owners = await Promise.all(
      ['a', 'b'].map((id) =>
        admin.registerOwner(
          { instanceId: id, group: 'default', role: 'writer', advertisedAddress: '127.0.0.1:1' },
          60_000,
        ),
      ),
    );
    for (let i = 0; i < 8; i++) {
      const topic = `persistent://t/ns/x y${i}`;
      await admin.createTopic(topic);
      await admin.acquireLease(topic, owners[0]!.sessionId);
    }
    const settings = { balancerWindowRounds: 1, balancerJoinWindowMs: 0, balancerIntervalMs: 1_000 };
    const first = new Balancer(admin.context, settings);
    const second = new Balancer(admin.context, settings);
    await first.round();
    await second.round();
    const status = await readBalancerStatus(admin.context);
    expect(status).toMatchObject({ leaderId: first.holderId, rounds: 1 });
    expect(status!.owners.map((owner) => [owner.instanceId, owner.topics])).toEqual([
      ['a', 8],
      ['b', 0],
    ]);
    expect(status!.decisions[0]).toContain('shedding');
    // The owners' address serves nothing: every move is recorded as failed, with the topic left where it was.
    expect(status!.recentMoves.length).toBeGreaterThan(0);
    expect(status!.recentMoves.every((move) => move.outcome.startsWith('failed') && move.fromInstanceId === 'a')).toBe(
      true,
    );
    expect(status!.recentMoves[0]!.topic).toMatch(/^persistent:\/\/t\/ns\/x y\d$/);
    // The leader's lease lapses after three intervals without a round; then the other takes over.
    clock.advance(3_001);
    await second.round();
    expect(await readBalancerStatus(admin.context)).toMatchObject({ leaderId: second.holderId });
    first.stop();
    second.stop();
  }, 30_000);
});
