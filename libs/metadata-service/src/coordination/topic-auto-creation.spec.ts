import { MetadataAdmin } from '../metadata-admin.js';
import { failure, sqliteFixture, type SqliteFixture } from '../testing/spec-support.js';

const TOPIC = 'persistent://auto/open/fresh';

describe('topic auto-creation on lookup (policy allowAutoTopicCreation)', () => {
  let fixture: SqliteFixture;
  beforeEach(async () => {
    fixture = sqliteFixture({ recountSettleMs: 0 });
    const { admin } = fixture;
    await admin.createTenant('auto');
    await admin.createNamespace('auto/open', { ownerGroup: 'writers', allowAutoTopicCreation: true });
    await admin.createNamespace('auto/closed', { ownerGroup: 'writers' });
    await admin.registerOwner(
      { instanceId: 'w-1', group: 'writers', role: 'writer', advertisedAddress: 'w-1:6650' },
      60_000,
    );
  });
  afterEach(async () => {
    await fixture.close();
  });

  it('refuses an absent topic NOT_FOUND where the namespace does not allow it, and creates nothing', async () => {
    const { admin } = fixture;
    expect((await admin.getNamespace('auto/closed')).policies.allowAutoTopicCreation).toBe(false);
    const refused = await failure(admin.lookupTopic('auto/closed/typo'));
    expect(refused).toMatchObject({
      code: 'NOT_FOUND',
      reason: 'TOPIC_NOT_FOUND',
      details: { topic: 'persistent://auto/closed/typo', namespace: 'auto/closed' },
    });
    // Both ways out are named: create the topic, or let the namespace create topics on first use.
    expect(refused.message).toContain('ledgerline topics create persistent://auto/closed/typo');
    expect(refused.message).toContain('ledgerline namespaces update auto/closed --allow-auto-topic-creation true');
    expect(await failure(admin.getTopic('auto/closed/typo'))).toMatchObject({ reason: 'TOPIC_NOT_FOUND' });
    expect(await admin.countTopics('auto/closed')).toBe(0);
  });

  it('creates an absent topic non-partitioned where the namespace allows it and answers as for an existing one', async () => {
    const { admin } = fixture;
    expect(await admin.lookupTopic(TOPIC)).toEqual({
      instanceId: 'w-1',
      advertisedAddress: 'w-1:6650',
      role: 'writer',
      redirectTopic: '',
      owned: false,
    });
    const created = await admin.getTopic(TOPIC);
    expect(created).toMatchObject({ name: TOPIC, partitions: 0 });
    expect((await admin.listTopics('auto/open')).topics).toEqual([TOPIC]);
    expect(await admin.countTopics('auto/open')).toBe(1);
    // A second lookup finds it: nothing is created again.
    expect(await admin.lookupTopic(TOPIC)).toMatchObject({ instanceId: 'w-1' });
    expect((await admin.getTopic(TOPIC)).createdAtMs).toBe(created.createdAtMs);
    expect(await admin.countTopics('auto/open')).toBe(1);
  });

  it('follows the policy as it is updated', async () => {
    const { admin } = fixture;
    const opened = await admin.updateNamespace('auto/closed', { allowAutoTopicCreation: true });
    expect(opened.policies.allowAutoTopicCreation).toBe(true);
    // An update that does not name the policy keeps it.
    expect((await admin.updateNamespace('auto/closed', { maxTopics: 10 })).policies.allowAutoTopicCreation).toBe(true);
    expect(await admin.lookupTopic('auto/closed/first')).toMatchObject({ instanceId: 'w-1' });
    await admin.updateNamespace('auto/closed', { allowAutoTopicCreation: false });
    expect(await failure(admin.lookupTopic('auto/closed/second'))).toMatchObject({ reason: 'TOPIC_NOT_FOUND' });
    expect((await admin.listTopics('auto/closed')).topics).toEqual(['persistent://auto/closed/first']);
  });

  it('respects maxTopics, refusing as CreateTopic refuses', async () => {
    const { admin } = fixture;
    await admin.createNamespace('auto/small', { maxTopics: 2, allowAutoTopicCreation: true });
    await admin.registerOwner(
      { instanceId: 'w-d', group: 'default', role: 'writer', advertisedAddress: 'w-d:6650' },
      60_000,
    );
    await admin.createTopic('auto/small/made');
    expect(await admin.lookupTopic('auto/small/second')).toMatchObject({ instanceId: 'w-d' });
    const viaLookup = await failure(admin.lookupTopic('auto/small/third'));
    const viaCreate = await failure(admin.createTopic('auto/small/third'));
    expect(viaLookup).toMatchObject({ code: 'RESOURCE_EXHAUSTED', reason: 'TOO_MANY_TOPICS' });
    expect({ code: viaLookup.code, reason: viaLookup.reason }).toEqual({
      code: viaCreate.code,
      reason: viaCreate.reason,
    });
    expect(await admin.countTopics('auto/small')).toBe(2);
    expect(await failure(admin.getTopic('auto/small/third'))).toMatchObject({ reason: 'TOPIC_NOT_FOUND' });
  });

  it('answers every one of many racing lookups in one instance with one creation, even for the last slot', async () => {
    const { admin } = fixture;
    await admin.createNamespace('auto/last', { maxTopics: 1, ownerGroup: 'writers', allowAutoTopicCreation: true });
    const answers = await Promise.all(Array.from({ length: 20 }, () => admin.lookupTopic('auto/last/raced')));
    expect(new Set(answers.map((answer) => answer.instanceId))).toEqual(new Set(['w-1']));
    expect(await admin.countTopics('auto/last')).toBe(1);
    expect((await admin.listTopics('auto/last')).topics).toEqual(['persistent://auto/last/raced']);
  });

  it('answers lookups racing on two instances over one store: one creates, the other sees ALREADY_EXISTS as success', async () => {
    const { admin, store, bus, clock } = fixture;
    const other = new MetadataAdmin(store, { bus, now: clock.now, recountSettleMs: 0 });
    const raced = ['a', 'b', 'c', 'd', 'e'].map((name) => `persistent://auto/open/raced-${name}`);
    const answers = await Promise.all(
      raced.flatMap((topic) => [admin.lookupTopic(topic), other.lookupTopic(topic), other.lookupTopic(topic)]),
    );
    expect(answers.every((answer) => answer.instanceId === 'w-1' && answer.role === 'writer')).toBe(true);
    expect((await admin.listTopics('auto/open')).topics).toEqual(raced);
    expect(await admin.countTopics('auto/open')).toBe(raced.length);
    // The counter is exact, not merely high: the losers gave their reserved slots back.
    expect(await admin.recountTopics('auto/open', 0)).toMatchObject({ counted: raced.length, corrected: false });
  });

  it('never creates in a reader namespace, nor through a redirected lookup, nor a partition name', async () => {
    const { admin } = fixture;
    await admin.registerOwner(
      { instanceId: 'r-1', group: 'readers', role: 'readonly', advertisedAddress: 'r-1:6650' },
      60_000,
    );
    const reader = await admin.createNamespace('auto/mirror', {
      ownerGroup: 'readers',
      writerNamespace: 'auto/open',
      allowAutoTopicCreation: true,
    });
    expect(reader.policies).toMatchObject({ readonly: true, allowAutoTopicCreation: true });
    expect(await failure(admin.lookupTopic('auto/mirror/absent'))).toMatchObject({
      code: 'NOT_FOUND',
      reason: 'TOPIC_NOT_FOUND',
    });
    expect(await failure(admin.lookupTopic('auto/open/absent', 'readers'))).toMatchObject({
      reason: 'TOPIC_NOT_FOUND',
    });
    expect(await failure(admin.lookupTopic('auto/open/parted-partition-0'))).toMatchObject({
      reason: 'TOPIC_NOT_FOUND',
    });
    expect(await admin.countTopics('auto/open')).toBe(0);
    expect((await admin.listTopics('auto/open')).topics).toEqual([]);
  });
});
