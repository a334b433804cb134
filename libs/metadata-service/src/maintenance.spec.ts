import { NamespaceName } from '@ledgerline/naming';
import { ownerPath } from './records/layout.js';
import { MetadataMaintenance } from './maintenance.js';
import { sweepExpiredOwners } from './coordination/owner-sessions.js';
import { sqliteFixture, type SqliteFixture } from './testing/spec-support.js';

describe('metadata maintenance', () => {
  let fixture: SqliteFixture;
  let maintenance: MetadataMaintenance;
  beforeEach(async () => {
    fixture = sqliteFixture({ recountSettleMs: 0 });
    maintenance = new MetadataMaintenance(fixture.admin.context, {
      reconcileIntervalMs: 3_600_000,
      recountSettleMs: 0,
      ownerSweepIntervalMs: 3_600_000,
    });
    await fixture.admin.createTenant('t');
  });
  afterEach(async () => {
    await maintenance.stop();
    await fixture.close();
  });

  it('recounts a suspected namespace once and corrects its counter', async () => {
    const { admin } = fixture;
    await admin.createNamespace('t/ns', { numberOfTopicBuckets: 3 });
    await admin.createTopics(['t/ns/a', 't/ns/b']);
    const namespace = NamespaceName.parse('t/ns');
    await admin.topicAdmin.reservations.reserve(namespace, 4, true);
    expect(await admin.countTopics('t/ns')).toBe(6);
    maintenance.suspect(namespace);
    await maintenance.recountSuspects();
    expect(await admin.countTopics('t/ns')).toBe(2);
    // A second suspicion right away is ignored (a full namespace must not be rescanned on every refusal).
    await admin.topicAdmin.reservations.reserve(namespace, 1, true);
    maintenance.suspect(namespace);
    await maintenance.recountSuspects();
    expect(await admin.countTopics('t/ns')).toBe(3);
    // The periodic pass over every namespace still catches it.
    await maintenance.recountAll();
    expect(await admin.countTopics('t/ns')).toBe(2);
  });

  it('sweeps away owners whose session expired', async () => {
    const { admin, store, clock } = fixture;
    const owner = { instanceId: 'gone', group: 'g', role: 'writer' as const, advertisedAddress: 'h:1' };
    await admin.registerOwner(owner, 1000);
    await admin.registerOwner({ ...owner, instanceId: 'alive' }, 60_000);
    clock.advance(20_000);
    expect(await sweepExpiredOwners(admin.context)).toBe(1);
    expect(await store.exists(ownerPath('g', 'gone'))).toBe(false);
    expect(await store.exists(ownerPath('g', 'alive'))).toBe(true);
  });
});
