import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { ManagedCursorInfoSchema, ManagedLedgerInfoSchema, ManagedLedgerState } from '@ledgerline/proto';
import { LEDGERS_DELETABLE_SUBJECT, decodeLedgersDeletable } from '@ledgerline/bus';
import { NamespaceName, persistenceName } from '@ledgerline/naming';
import { failure, sqliteFixture, type SqliteFixture } from '../testing/spec-support.js';

describe('topics', () => {
  let fixture: SqliteFixture;
  beforeEach(async () => {
    fixture = sqliteFixture({ recountSettleMs: 0 });
    await fixture.admin.createTenant('tenant');
  });
  afterEach(async () => {
    await fixture.close();
  });

  it("writes the seed's topics in exactly the 3-bucket layout of PIP-157", async () => {
    const { admin, store } = fixture;
    await admin.createNamespace('tenant/namespace', { numberOfTopicBuckets: 3 });
    await admin.createTopic('persistent://tenant/namespace/nptopic1');
    await admin.createTopic('persistent://tenant/namespace/nptopic2');
    const partitioned = await admin.createTopic('persistent://tenant/namespace/ptopic', 4);
    expect(partitioned).toMatchObject({ partitions: 4, managedLedgerPath: '' });
    const base = '/managed-ledgers/tenant/namespace/persistent';
    expect((await store.children(base)).names).toEqual(['$0', '$1', '$2']);
    expect((await store.children(`${base}/$0`)).names).toEqual(['ptopic-partition-0', 'ptopic-partition-3']);
    expect((await store.children(`${base}/$1`)).names).toEqual(['nptopic2', 'ptopic-partition-1']);
    expect((await store.children(`${base}/$2`)).names).toEqual(['nptopic1', 'ptopic-partition-2']);
    const node = await store.get(`${base}/$2/nptopic1`);
    expect(fromBinary(ManagedLedgerInfoSchema, node!.value).state).toBe(ManagedLedgerState.ACTIVE);
    expect(await admin.countTopics('tenant/namespace')).toBe(6);
    expect((await admin.getTopic('tenant/namespace/nptopic1')).managedLedgerPath).toBe(`${base}/$2/nptopic1`);
    const listed = await admin.listTopics('tenant/namespace');
    expect(listed.nextPageToken).toBe('');
    expect(listed.topics).toEqual([
      'persistent://tenant/namespace/nptopic1',
      'persistent://tenant/namespace/nptopic2',
      'persistent://tenant/namespace/ptopic-partition-0',
      'persistent://tenant/namespace/ptopic-partition-1',
      'persistent://tenant/namespace/ptopic-partition-2',
      'persistent://tenant/namespace/ptopic-partition-3',
    ]);
  });

  it.each([1, 7, 64])('pages through every topic in order with %i bucket(s)', async (buckets) => {
    const { admin } = fixture;
    await admin.createNamespace('tenant/paged', { numberOfTopicBuckets: buckets });
    const names = Array.from(
      { length: 250 },
      (_, index) => `persistent://tenant/paged/t-${String(index).padStart(4, '0')}`,
    );
    const results = await admin.createTopics(names);
    expect(results.every((result) => result.created)).toBe(true);
    const seen: string[] = [];
    let token = '';
    for (let page = 0; page < 100; page++) {
      const listed = await admin.listTopics('tenant/paged', token, 40);
      expect(listed.topics.length).toBeLessThanOrEqual(40);
      seen.push(...listed.topics);
      token = listed.nextPageToken;
      if (token === '') break;
    }
    expect(token).toBe('');
    expect(seen).toEqual(names);
  });

  it('refuses page tokens it did not hand out', async () => {
    const { admin } = fixture;
    await admin.createNamespace('tenant/a', { numberOfTopicBuckets: 4 });
    await admin.createNamespace('tenant/b', { numberOfTopicBuckets: 4 });
    await admin.createTopics(Array.from({ length: 20 }, (_, index) => `tenant/a/x${index}`));
    const page = await admin.listTopics('tenant/a', '', 5);
    expect(page.nextPageToken).not.toBe('');
    for (const token of ['garbage!', 'AAAA', page.nextPageToken.slice(0, -3), 'x'.repeat(100_000)]) {
      expect(await failure(admin.listTopics('tenant/a', token, 5))).toMatchObject({
        code: 'INVALID_ARGUMENT',
        reason: 'INVALID_PAGE_TOKEN',
      });
    }
    expect(await failure(admin.listTopics('tenant/b', page.nextPageToken, 5))).toMatchObject({
      reason: 'INVALID_PAGE_TOKEN',
    });
    expect(await failure(admin.listTopics('tenant/a', '', 100_000))).toMatchObject({ reason: 'INVALID_PAGE_SIZE' });
  });

  it('holds the topic limit exactly under 100 parallel creates', async () => {
    const { admin } = fixture;
    await admin.createNamespace('tenant/limited', { numberOfTopicBuckets: 8, maxTopics: 50 });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 100 }, (_, index) => admin.createTopic(`persistent://tenant/limited/t${index}`)),
    );
    const refused = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(outcomes.length - refused.length).toBe(50);
    for (const outcome of refused) {
      expect((outcome as PromiseRejectedResult).reason).toMatchObject({
        code: 'RESOURCE_EXHAUSTED',
        reason: 'TOO_MANY_TOPICS',
      });
    }
    expect(await admin.countTopics('tenant/limited')).toBe(50);
    expect((await admin.listTopics('tenant/limited')).topics).toHaveLength(50);
    expect(await failure(admin.createTopic('tenant/limited/p', 2))).toMatchObject({ reason: 'TOO_MANY_TOPICS' });
  });

  it('counts each partition against the limit and creates batches up to it', async () => {
    const { admin } = fixture;
    await admin.createNamespace('tenant/small', { maxTopics: 5 });
    await admin.createTopic('tenant/small/p', 3);
    const results = await admin.createTopics([
      'tenant/small/a',
      'tenant/small/p',
      'tenant/small/b',
      'tenant/small/c',
      'bad//name',
    ]);
    expect(results.map((result) => [result.created, result.errorReason])).toEqual([
      [true, ''],
      [false, 'TOPIC_EXISTS'],
      [true, ''],
      [false, 'TOO_MANY_TOPICS'],
      [false, 'INVALID_NAMESPACE_NAME'],
    ]);
    expect(await admin.countTopics('tenant/small')).toBe(5);
  });

  it('refuses duplicates, partition names and bad input with clear reasons', async () => {
    const { admin } = fixture;
    await admin.createNamespace('tenant/ns');
    await admin.createTopic('tenant/ns/x');
    const cases: [() => Promise<unknown>, string, string][] = [
      [() => admin.createTopic('tenant/ns/x'), 'ALREADY_EXISTS', 'TOPIC_EXISTS'],
      [() => admin.createTopic('tenant/ns/x', 2), 'ALREADY_EXISTS', 'TOPIC_EXISTS'],
      [() => admin.createTopic('tenant/ns/y-partition-0'), 'INVALID_ARGUMENT', 'PARTITION_NAME_RESERVED'],
      [() => admin.createTopic('tenant/ns/y', -1), 'INVALID_ARGUMENT', 'INVALID_PARTITIONS'],
      [() => admin.createTopic('non-persistent://tenant/ns/y'), 'INVALID_ARGUMENT', 'NON_PERSISTENT_TOPIC'],
      [() => admin.createTopic('bogus://tenant/ns/y'), 'INVALID_ARGUMENT', 'INVALID_TOPIC_NAME'],
      [() => admin.createTopic('tenant/none/y'), 'NOT_FOUND', 'NAMESPACE_NOT_FOUND'],
      [() => admin.createTopic('nobody/ns/y'), 'NOT_FOUND', 'NAMESPACE_NOT_FOUND'],
      [() => admin.createTopic(`tenant/ns/${'z'.repeat(5000)}`), 'INVALID_ARGUMENT', 'INVALID_TOPIC_NAME'],
      [() => admin.createTopic(`tenant/ns/${'é'.repeat(200)}`), 'INVALID_ARGUMENT', 'TOPIC_NAME_TOO_LONG'],
      [() => admin.createTopic(`tenant/ns/${'z'.repeat(990)}`, 10), 'INVALID_ARGUMENT', 'TOPIC_NAME_TOO_LONG'],
      [() => admin.createTopic('tenant/ns/..'), 'INVALID_ARGUMENT', 'INVALID_TOPIC_NAME'],
      [() => admin.getTopic('tenant/ns/missing'), 'NOT_FOUND', 'TOPIC_NOT_FOUND'],
      [() => admin.deleteTopic('tenant/ns/missing'), 'NOT_FOUND', 'TOPIC_NOT_FOUND'],
      [
        () => admin.createTopics(Array.from({ length: 10_001 }, (_, i) => `tenant/ns/b${i}`)),
        'INVALID_ARGUMENT',
        'BATCH_TOO_LARGE',
      ],
    ];
    for (const [call, code, reason] of cases) expect(await failure(call())).toMatchObject({ code, reason });
    expect(await admin.countTopics('tenant/ns')).toBe(1);
  });

  it('marks every ledger deletable in one write when a topic is deleted, and hides the topic', async () => {
    const { admin, store, bus } = fixture;
    await admin.createNamespace('tenant/ns', { numberOfTopicBuckets: 3 });
    const topic = await admin.createTopic('tenant/ns/with-ledgers');
    await admin.createTopic('tenant/ns/empty');
    const info = create(ManagedLedgerInfoSchema, {
      state: ManagedLedgerState.ACTIVE,
      ledgerInfo: [{ ledgerId: 11n }, { ledgerId: 12n }],
    });
    await store.put(topic.managedLedgerPath, toBinary(ManagedLedgerInfoSchema, info));
    const cursor = create(ManagedCursorInfoSchema, { cursorsLedgerId: 13n });
    await store.put(`${topic.managedLedgerPath}/sub`, toBinary(ManagedCursorInfoSchema, cursor));
    // Cursors whose state lives in their node (-1) or that never had a ledger (0) name no ledger to delete.
    for (const [name, cursorsLedgerId] of [
      ['inline', -1n],
      ['fresh', 0n],
    ] as const) {
      const info = create(ManagedCursorInfoSchema, { cursorsLedgerId });
      await store.put(`${topic.managedLedgerPath}/${name}`, toBinary(ManagedCursorInfoSchema, info));
    }
    const announcements = bus.subscribe(LEDGERS_DELETABLE_SUBJECT);

    expect(await admin.deleteTopic('tenant/ns/with-ledgers')).toEqual([11n, 12n, 13n]);
    const node = await store.get(topic.managedLedgerPath);
    const marked = fromBinary(ManagedLedgerInfoSchema, node!.value);
    expect(marked.state).toBe(ManagedLedgerState.DELETING);
    expect(marked.ledgerInfo).toEqual([]);
    expect(marked.deletableLedgers.map((ledger) => [ledger.ledgerId, ledger.cursorName])).toEqual([
      [11n, ''],
      [12n, ''],
      [13n, 'sub'],
    ]);
    expect(await store.exists(`${topic.managedLedgerPath}/sub`)).toBe(false);
    expect(await store.exists(`${topic.managedLedgerPath}/inline`)).toBe(false);
    const message = await announcements[Symbol.asyncIterator]().next();
    expect(decodeLedgersDeletable(message.value!.data)).toEqual({
      name: persistenceName('tenant/ns/with-ledgers', 3),
      ledgerIds: [11, 12, 13],
    });
    announcements.unsubscribe();

    expect(await admin.deleteTopic('tenant/ns/empty')).toEqual([]);
    expect((await admin.listTopics('tenant/ns')).topics).toEqual([]);
    expect(await admin.countTopics('tenant/ns')).toBe(0);
    expect(await failure(admin.getTopic('tenant/ns/with-ledgers'))).toMatchObject({ reason: 'TOPIC_NOT_FOUND' });
    expect(await failure(admin.deleteNamespace('tenant/ns'))).toMatchObject({
      reason: 'NAMESPACE_HAS_PENDING_DELETIONS',
    });

    // Re-creating the name takes the node over and keeps the markers for the garbage collector.
    await admin.createTopic('tenant/ns/with-ledgers');
    const revived = fromBinary(ManagedLedgerInfoSchema, (await store.get(topic.managedLedgerPath))!.value);
    expect(revived.state).toBe(ManagedLedgerState.ACTIVE);
    expect(revived.deletableLedgers.map((ledger) => ledger.ledgerId)).toEqual([11n, 12n, 13n]);
    expect((await admin.listTopics('tenant/ns')).topics).toEqual(['persistent://tenant/ns/with-ledgers']);
  });

  it('deletes every partition of a partitioned topic and refuses deleting one partition', async () => {
    const { admin } = fixture;
    await admin.createNamespace('tenant/ns', { numberOfTopicBuckets: 2 });
    await admin.createTopic('tenant/ns/p', 3);
    expect(await failure(admin.deleteTopic('tenant/ns/p-partition-1'))).toMatchObject({
      reason: 'PARTITION_OF_PARTITIONED_TOPIC',
    });
    expect(await admin.getTopic('tenant/ns/p')).toMatchObject({ partitions: 3 });
    await admin.deleteTopic('tenant/ns/p');
    expect(await admin.countTopics('tenant/ns')).toBe(0);
    expect((await admin.listTopics('tenant/ns')).topics).toEqual([]);
    await admin.createTopic('tenant/ns/p');
  });

  it('recounts a counter that a crash left high', async () => {
    const { admin } = fixture;
    await admin.createNamespace('tenant/ns', { numberOfTopicBuckets: 5, maxTopics: 3 });
    await admin.createTopics(['tenant/ns/a', 'tenant/ns/b']);
    // A create that reserved its slot and died before writing its node.
    await admin.topicAdmin.reservations.reserve(NamespaceName.parse('tenant/ns'), 1, true);
    expect(await failure(admin.createTopic('tenant/ns/c'))).toMatchObject({ reason: 'TOO_MANY_TOPICS' });
    const result = await admin.recountTopics('tenant/ns', 0);
    expect(result).toMatchObject({ before: 3, counted: 2, corrected: true });
    await admin.createTopic('tenant/ns/c');
    expect(await admin.countTopics('tenant/ns')).toBe(3);
  });
});
