import { failure, sqliteFixture, type SqliteFixture } from '../testing/spec-support.js';

// UpdatePartitionedTopic: a partitioned topic gains partitions (Pulsar's
// update-partitioned-topic, what the Kafka gateway's CreatePartitions calls);
// the partitions it had are left as they are, and a refused or validate-only
// call writes nothing.

const BASE = '/managed-ledgers/tenant/ns/persistent';

describe('growing a partitioned topic', () => {
  let fixture: SqliteFixture;
  beforeEach(async () => {
    fixture = sqliteFixture({ recountSettleMs: 0 });
    await fixture.admin.createTenant('tenant');
    await fixture.admin.createNamespace('tenant/ns', { numberOfTopicBuckets: 1 });
  });
  afterEach(async () => {
    await fixture.close();
  });

  /** Every managed-ledger node of the namespace (one bucket: no bucket folder), by name, with its version. */
  async function nodes(): Promise<Map<string, number>> {
    const { store } = fixture;
    const versions = new Map<string, number>();
    for (const name of (await store.children(BASE)).names)
      versions.set(name, (await store.get(`${BASE}/${name}`))!.version);
    return versions;
  }

  it('creates the new partitions and leaves the existing ones untouched', async () => {
    const { admin } = fixture;
    await admin.createTopic('tenant/ns/orders', 2);
    const before = await nodes();
    const grown = await admin.updatePartitionedTopic('tenant/ns/orders', 5);
    expect(grown).toMatchObject({ name: 'persistent://tenant/ns/orders', partitions: 5, managedLedgerPath: '' });
    expect((await admin.getTopic('tenant/ns/orders')).partitions).toBe(5);
    const after = await nodes();
    expect([...after.keys()]).toEqual([0, 1, 2, 3, 4].map((index) => `orders-partition-${index}`));
    for (const [name, version] of before) expect(after.get(name)).toBe(version);
    expect(await admin.countTopics('tenant/ns')).toBe(5);
    expect((await admin.listTopics('tenant/ns')).topics).toContain('persistent://tenant/ns/orders-partition-4');
  });

  it('checks without writing when asked to validate only', async () => {
    const { admin } = fixture;
    await admin.createTopic('tenant/ns/orders', 2);
    expect(await admin.updatePartitionedTopic('tenant/ns/orders', 4, true)).toMatchObject({ partitions: 4 });
    expect((await admin.getTopic('tenant/ns/orders')).partitions).toBe(2);
    expect([...(await nodes()).keys()]).toEqual(['orders-partition-0', 'orders-partition-1']);
    expect(await failure(admin.updatePartitionedTopic('tenant/ns/orders', 2, true))).toMatchObject({
      code: 'FAILED_PRECONDITION',
      reason: 'PARTITION_COUNT_NOT_INCREASED',
    });
  });

  it('refuses shrinking, the same count, a plain or unknown topic and bad counts, writing nothing', async () => {
    const { admin } = fixture;
    await admin.createTopic('tenant/ns/orders', 3);
    await admin.createTopic('tenant/ns/plain');
    const before = await nodes();
    const cases: [() => Promise<unknown>, string, string][] = [
      [
        () => admin.updatePartitionedTopic('tenant/ns/orders', 2),
        'FAILED_PRECONDITION',
        'PARTITION_COUNT_NOT_INCREASED',
      ],
      [
        () => admin.updatePartitionedTopic('tenant/ns/orders', 3),
        'FAILED_PRECONDITION',
        'PARTITION_COUNT_NOT_INCREASED',
      ],
      [() => admin.updatePartitionedTopic('tenant/ns/plain', 2), 'FAILED_PRECONDITION', 'TOPIC_NOT_PARTITIONED'],
      [
        () => admin.updatePartitionedTopic('tenant/ns/orders-partition-1', 2),
        'FAILED_PRECONDITION',
        'TOPIC_NOT_PARTITIONED',
      ],
      [() => admin.updatePartitionedTopic('tenant/ns/missing', 2), 'NOT_FOUND', 'TOPIC_NOT_FOUND'],
      [() => admin.updatePartitionedTopic('tenant/none/orders', 2), 'NOT_FOUND', 'NAMESPACE_NOT_FOUND'],
      [() => admin.updatePartitionedTopic('tenant/ns/orders', 0), 'INVALID_ARGUMENT', 'INVALID_PARTITIONS'],
      [() => admin.updatePartitionedTopic('tenant/ns/orders', 10_001), 'INVALID_ARGUMENT', 'INVALID_PARTITIONS'],
      [() => admin.updatePartitionedTopic('tenant/ns/orders', 4.5), 'INVALID_ARGUMENT', 'INVALID_PARTITIONS'],
      [() => admin.updatePartitionedTopic('bogus://tenant/ns/orders', 4), 'INVALID_ARGUMENT', 'INVALID_TOPIC_NAME'],
    ];
    for (const [call, code, reason] of cases) expect(await failure(call())).toMatchObject({ code, reason });
    expect(await nodes()).toEqual(before);
    expect((await admin.getTopic('tenant/ns/orders')).partitions).toBe(3);
    expect(await admin.countTopics('tenant/ns')).toBe(4);
  });

  it("counts the new partitions against the namespace's maxTopics and refuses a grow past it whole", async () => {
    const { admin } = fixture;
    await admin.createNamespace('tenant/small', { maxTopics: 4 });
    await admin.createTopic('tenant/small/orders', 2);
    expect(await failure(admin.updatePartitionedTopic('tenant/small/orders', 5))).toMatchObject({
      code: 'RESOURCE_EXHAUSTED',
      reason: 'TOO_MANY_TOPICS',
    });
    expect((await admin.getTopic('tenant/small/orders')).partitions).toBe(2);
    expect((await admin.listTopics('tenant/small')).topics).toHaveLength(2);
    await admin.updatePartitionedTopic('tenant/small/orders', 4);
    expect(await admin.countTopics('tenant/small')).toBe(4);
  });

  it('ends two concurrent grows at the larger count, each partition created once and counted once', async () => {
    const { admin } = fixture;
    await admin.createTopic('tenant/ns/orders', 2);
    const outcomes = await Promise.allSettled([
      admin.updatePartitionedTopic('tenant/ns/orders', 6),
      admin.updatePartitionedTopic('tenant/ns/orders', 8),
    ]);
    // The smaller grow either lands first (the larger then grows on from it) or finds the larger done.
    if (outcomes[0].status === 'rejected') {
      expect(outcomes[0].reason).toMatchObject({ reason: 'PARTITION_COUNT_NOT_INCREASED' });
    }
    expect(outcomes[1].status).toBe('fulfilled');
    expect((await admin.getTopic('tenant/ns/orders')).partitions).toBe(8);
    expect((await nodes()).size).toBe(8);
    expect(await admin.countTopics('tenant/ns')).toBe(8);
  });
});
