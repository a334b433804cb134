import { eventually } from '@ledgerline/testing';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import {
  AdminService,
  ChangeKind,
  LookupService,
  ManagedLedgerInfoSchema,
  ManagedLedgerState,
  MetadataStoreService,
  OwnerRole,
} from '@ledgerline/proto';
import { LedgerlineError } from '@ledgerline/errors';
import { closeClient, createClient, type Client, RpcReason } from '@ledgerline/rpc';
import { failure } from './spec-support.js';

/** What an end-to-end run needs: the gRPC addresses of one or more metadata instances over one store. */
export interface E2EDeployment {
  addresses: string[];
  close(): Promise<void>;
}

interface Clients {
  admin: Client<typeof AdminService>;
  lookup: Client<typeof LookupService>;
  store: Client<typeof MetadataStoreService>;
}

function connect(address: string): Clients {
  return {
    admin: createClient(AdminService, address),
    lookup: createClient(LookupService, address),
    store: createClient(MetadataStoreService, address),
  };
}

/**
 * The end-to-end suite of the metadata service, run over gRPC against each
 * deployment kind (standalone: SQLite + in-process bus; cluster: Redis + NATS,
 * two instances). With several addresses, calls alternate between instances.
 */
export function metadataE2ESuite(start: () => Promise<E2EDeployment>): void {
  let deployment: E2EDeployment;
  let clients: Clients[];
  let turn = 0;
  const next = (): Clients => clients[turn++ % clients.length]!;

  beforeAll(async () => {
    deployment = await start();
    clients = deployment.addresses.map(connect);
  });
  afterAll(async () => {
    for (const set of clients) for (const client of Object.values(set)) closeClient(client);
    await deployment.close();
  });

  tenantAndNamespaceFlow(next);
  bucketedTopicFlow(next);
  exactLimitFlow(next);
  topicDeletionFlow(next);
  leaseTakeoverFlow(next);
  readerRedirectFlow(next);
  autoCreationFlow(next);
  badInputFlow(next);
  watchFlow(next);
}

/** End to end: every tenant and namespace flow. `next` hands out the clients of the next instance. */
function tenantAndNamespaceFlow(next: () => Clients): void {
  it('runs every tenant and namespace flow', async () => {
    await next().admin.createTenant({ tenant: 'e2e-acme', adminRoles: ['ops'] });
    expect((await next().admin.listTenants({})).tenants).toContain('e2e-acme');
    expect((await next().admin.getTenant({ tenant: 'e2e-acme' })).tenant).toMatchObject({
      name: 'e2e-acme',
      adminRoles: ['ops'],
    });
    const created = await next().admin.createNamespace({
      namespace: 'e2e-acme/orders',
      policies: { numberOfTopicBuckets: 16, maxTopics: 10, retentionTimeMinutes: 30n, ownerGroup: 'east' },
    });
    expect(created.namespace?.policies).toMatchObject({
      numberOfTopicBuckets: 16,
      maxTopics: 10,
      retentionTimeMinutes: 30n,
      ownerGroup: 'east',
    });
    const updated = await next().admin.updateNamespace({ namespace: 'e2e-acme/orders', policies: { maxTopics: 20 } });
    expect(updated.namespace?.policies?.maxTopics).toBe(20);
    expect((await next().admin.getNamespace({ namespace: 'e2e-acme/orders' })).namespace?.policies?.maxTopics).toBe(20);
    const immutable = await failure(
      next().admin.updateNamespace({ namespace: 'e2e-acme/orders', policies: { numberOfTopicBuckets: 2 } }),
    );
    expect(immutable).toMatchObject({ code: 'FAILED_PRECONDITION', reason: 'BUCKETS_IMMUTABLE' });
    expect((await next().admin.listNamespaces({ tenant: 'e2e-acme' })).namespaces).toEqual(['e2e-acme/orders']);
    expect(await failure(next().admin.deleteTenant({ tenant: 'e2e-acme' }))).toMatchObject({
      reason: 'TENANT_NOT_EMPTY',
    });
    await next().admin.deleteNamespace({ namespace: 'e2e-acme/orders' });
    await next().admin.deleteTenant({ tenant: 'e2e-acme' });
    expect((await next().admin.listTenants({})).tenants).not.toContain('e2e-acme');
    expect(await failure(next().admin.getTenant({ tenant: 'e2e-acme' }))).toMatchObject({
      code: 'NOT_FOUND',
      reason: 'TENANT_NOT_FOUND',
    });
  });
}

/** End to end: topics in the seed's bucket layout. `next` hands out the clients of the next instance. */
function bucketedTopicFlow(next: () => Clients): void {
  it("creates, lists, counts and deletes topics in the seed's 3-bucket layout", async () => {
    await next().admin.createTenant({ tenant: 'tenant' });
    await next().admin.createNamespace({ namespace: 'tenant/namespace', policies: { numberOfTopicBuckets: 3 } });
    await next().admin.createTopic({ topic: 'persistent://tenant/namespace/nptopic1' });
    const batch = await next().admin.createTopics({
      topics: ['tenant/namespace/nptopic2', 'tenant/namespace/nptopic1'],
    });
    expect(batch.results.map((result) => result.errorReason)).toEqual(['', 'TOPIC_EXISTS']);
    await next().admin.createTopic({ topic: 'persistent://tenant/namespace/ptopic', partitions: 4 });
    const base = '/managed-ledgers/tenant/namespace/persistent';
    const children = async (path: string) => (await next().store.children({ path })).names;
    expect(await children(base)).toEqual(['$0', '$1', '$2']);
    expect(await children(`${base}/$0`)).toEqual(['ptopic-partition-0', 'ptopic-partition-3']);
    expect(await children(`${base}/$1`)).toEqual(['nptopic2', 'ptopic-partition-1']);
    expect(await children(`${base}/$2`)).toEqual(['nptopic1', 'ptopic-partition-2']);
    expect((await next().admin.countTopics({ namespace: 'tenant/namespace' })).count).toBe(6n);
    const first = await next().admin.listTopics({ namespace: 'tenant/namespace', pageSize: 4 });
    const second = await next().admin.listTopics({
      namespace: 'tenant/namespace',
      pageSize: 4,
      pageToken: first.nextPageToken,
    });
    expect([...first.topics, ...second.topics]).toEqual([
      'persistent://tenant/namespace/nptopic1',
      'persistent://tenant/namespace/nptopic2',
      'persistent://tenant/namespace/ptopic-partition-0',
      'persistent://tenant/namespace/ptopic-partition-1',
      'persistent://tenant/namespace/ptopic-partition-2',
      'persistent://tenant/namespace/ptopic-partition-3',
    ]);
    expect(second.nextPageToken).toBe('');
    expect((await next().admin.getTopic({ topic: 'tenant/namespace/ptopic' })).topic?.partitions).toBe(4);
    await next().admin.deleteTopic({ topic: 'tenant/namespace/ptopic' });
    expect((await next().admin.countTopics({ namespace: 'tenant/namespace' })).count).toBe(2n);
    expect(await children(`${base}/$0`)).toEqual([]);
  });
}

/** End to end: the exact topic limit. `next` hands out the clients of the next instance. */
function exactLimitFlow(next: () => Clients): void {
  it('keeps the topic limit exact under 100 parallel creates', async () => {
    await next().admin.createTenant({ tenant: 'limits' });
    await next().admin.createNamespace({
      namespace: 'limits/ns',
      policies: { numberOfTopicBuckets: 8, maxTopics: 50 },
    });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 100 }, (_, index) => next().admin.createTopic({ topic: `limits/ns/t-${index}` })),
    );
    const refused = outcomes.filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    expect(outcomes.length - refused.length).toBe(50);
    for (const outcome of refused) {
      expect(outcome.reason).toBeInstanceOf(LedgerlineError);
      expect(outcome.reason).toMatchObject({ code: 'RESOURCE_EXHAUSTED', reason: 'TOO_MANY_TOPICS' });
    }
    expect((await next().admin.countTopics({ namespace: 'limits/ns' })).count).toBe(50n);
    let listed = 0;
    let token = '';
    for (let page = 0; page < 20; page++) {
      const result = await next().admin.listTopics({ namespace: 'limits/ns', pageToken: token, pageSize: 7 });
      listed += result.topics.length;
      token = result.nextPageToken;
      if (token === '') break;
    }
    expect(listed).toBe(50);
  });
}

/** End to end: topic deletion marking ledgers. `next` hands out the clients of the next instance. */
function topicDeletionFlow(next: () => Clients): void {
  it('marks the ledgers of a deleted topic deletable and hides the topic', async () => {
    await next().admin.createTenant({ tenant: 'gc' });
    await next().admin.createNamespace({ namespace: 'gc/ns', policies: { numberOfTopicBuckets: 4 } });
    const topic = (await next().admin.createTopic({ topic: 'gc/ns/data' })).topic!;
    const node = (await next().store.get({ path: topic.managedLedgerPath })).node!;
    const withLedgers = create(ManagedLedgerInfoSchema, {
      state: ManagedLedgerState.ACTIVE,
      ledgerInfo: [{ ledgerId: 101n }, { ledgerId: 102n }],
    });
    await next().store.put({
      path: topic.managedLedgerPath,
      value: toBinary(ManagedLedgerInfoSchema, withLedgers),
      expected: { case: 'expectedVersion', value: node.version },
    });
    expect((await next().admin.deleteTopic({ topic: 'gc/ns/data' })).deletableLedgerIds).toEqual([101n, 102n]);
    const marked = fromBinary(
      ManagedLedgerInfoSchema,
      (await next().store.get({ path: topic.managedLedgerPath })).node!.value,
    );
    expect(marked.state).toBe(ManagedLedgerState.DELETING);
    expect(marked.deletableLedgers.map((ledger) => ledger.ledgerId)).toEqual([101n, 102n]);
    expect((await next().admin.listTopics({ namespace: 'gc/ns' })).topics).toEqual([]);
    expect(await failure(next().admin.getTopic({ topic: 'gc/ns/data' }))).toMatchObject({
      code: 'NOT_FOUND',
      reason: 'TOPIC_NOT_FOUND',
    });
    expect(await failure(next().lookup.lookupTopic({ topic: 'gc/ns/data' }))).toMatchObject({
      reason: 'TOPIC_NOT_FOUND',
    });
  });
}

/** End to end: lease expiry and takeover. `next` hands out the clients of the next instance. */
function leaseTakeoverFlow(next: () => Clients): void {
  it('lets a lease lapse with its session and another owner take it over', async () => {
    await next().admin.createTenant({ tenant: 'own' });
    await next().admin.createNamespace({ namespace: 'own/ns', policies: { ownerGroup: 'writers' } });
    await next().admin.createTopic({ topic: 'own/ns/t' });
    const owner = (id: string) => ({
      instanceId: id,
      role: OwnerRole.WRITER,
      group: 'writers',
      advertisedAddress: `${id}:6650`,
    });
    // w-1's session must outlive the next few calls even on a loaded machine, then lapse.
    const dying = await next().lookup.registerOwner({ owner: owner('w-1'), sessionTtlMs: 2000n });
    const survivor = await next().lookup.registerOwner({ owner: owner('w-2'), sessionTtlMs: 60_000n });
    const lease = (await next().lookup.acquireLease({ topic: 'own/ns/t', sessionId: dying.sessionId })).lease!;
    expect(
      await failure(next().lookup.acquireLease({ topic: 'own/ns/t', sessionId: survivor.sessionId })),
    ).toMatchObject({
      code: 'FAILED_PRECONDITION',
      reason: 'LEASE_HELD',
    });
    expect(await next().lookup.lookupTopic({ topic: 'own/ns/t' })).toMatchObject({ instanceId: 'w-1', owned: true });
    // w-1 stops keeping its session alive.
    await eventually(async () => (await next().lookup.getLease({ topic: 'own/ns/t' })).lease === undefined);
    const takeover = (await next().lookup.acquireLease({ topic: 'own/ns/t', sessionId: survivor.sessionId })).lease!;
    expect(takeover.instanceId).toBe('w-2');
    expect(takeover.version).toBeGreaterThan(lease.version);
    expect(await next().lookup.lookupTopic({ topic: 'own/ns/t' })).toMatchObject({ instanceId: 'w-2', owned: true });
    expect(await failure(next().lookup.renewLease({ topic: 'own/ns/t', sessionId: dying.sessionId }))).toMatchObject({
      reason: 'SESSION_EXPIRED',
    });
    await next().lookup.keepAliveOwner({ sessionId: survivor.sessionId });
    expect((await next().lookup.listOwners({ group: 'writers' })).owners.map((o) => o.instanceId)).toEqual(['w-2']);
    const first = (await next().lookup.allocateLedgerId({})).ledgerId;
    expect((await next().lookup.allocateLedgerId({})).ledgerId).toBeGreaterThan(first);
  });
}

/** End to end: the PIP-63 lookup redirect. `next` hands out the clients of the next instance. */
function readerRedirectFlow(next: () => Clients): void {
  it('redirects a lookup through a reader group to the reader namespace (PIP-63)', async () => {
    await next().admin.createTenant({ tenant: 'my-tenant' });
    await next().admin.createNamespace({
      namespace: 'my-tenant/writer-namespace',
      policies: { ownerGroup: 'writers', numberOfTopicBuckets: 2 },
    });
    await next().admin.createTopic({ topic: 'persistent://my-tenant/writer-namespace/topic' });
    await next().admin.createNamespace({
      namespace: 'my-tenant/reader-namespace',
      policies: { ownerGroup: 'readers' },
    });
    const set = await next().admin.setWriterNamespace({
      namespace: 'my-tenant/reader-namespace',
      writerNamespace: 'my-tenant/writer-namespace',
    });
    expect(set.namespace?.policies).toMatchObject({ writerNamespace: 'my-tenant/writer-namespace', readonly: true });
    await next().lookup.registerOwner({
      owner: {
        instanceId: 'broker-2',
        role: OwnerRole.WRITER,
        group: 'writers',
        advertisedAddress: '192.168.0.2:6650',
      },
      sessionTtlMs: 5000n,
    });
    await next().lookup.registerOwner({
      owner: {
        instanceId: 'broker-3',
        role: OwnerRole.READONLY,
        group: 'readers',
        advertisedAddress: '192.168.0.3:6650',
      },
      sessionTtlMs: 5000n,
    });
    const answer = await next().lookup.lookupTopic({
      topic: 'persistent://my-tenant/writer-namespace/topic',
      group: 'readers',
    });
    expect(answer).toMatchObject({
      instanceId: 'broker-3',
      advertisedAddress: '192.168.0.3:6650',
      role: OwnerRole.READONLY,
      redirectTopic: 'persistent://my-tenant/reader-namespace/topic',
    });
    const direct = await next().lookup.lookupTopic({ topic: 'persistent://my-tenant/writer-namespace/topic' });
    expect(direct).toMatchObject({ instanceId: 'broker-2', role: OwnerRole.WRITER, redirectTopic: '' });
    expect(await failure(next().admin.createTopic({ topic: 'my-tenant/reader-namespace/x' }))).toMatchObject({
      code: 'FAILED_PRECONDITION',
      reason: 'NAMESPACE_READONLY',
    });
  });
}

/** End to end: topic creation on lookup (allowAutoTopicCreation). `next` hands out the clients of the next instance. */
function autoCreationFlow(next: () => Clients): void {
  it('creates an absent topic on lookup only where the namespace allows it, once however many lookups race', async () => {
    await next().admin.createTenant({ tenant: 'e2e-auto' });
    const open = await next().admin.createNamespace({
      namespace: 'e2e-auto/open',
      policies: { ownerGroup: 'auto-writers', allowAutoTopicCreation: true },
    });
    expect(open.namespace?.policies?.allowAutoTopicCreation).toBe(true);
    await next().admin.createNamespace({ namespace: 'e2e-auto/closed', policies: { ownerGroup: 'auto-writers' } });
    const closed = await next().admin.getNamespace({ namespace: 'e2e-auto/closed' });
    expect(closed.namespace?.policies?.allowAutoTopicCreation).toBe(false);
    await next().lookup.registerOwner({
      owner: { instanceId: 'aw-1', role: OwnerRole.WRITER, group: 'auto-writers', advertisedAddress: 'aw-1:6650' },
      sessionTtlMs: 60_000n,
    });
    expect(await failure(next().lookup.lookupTopic({ topic: 'e2e-auto/closed/typo' }))).toMatchObject({
      code: 'NOT_FOUND',
      reason: 'TOPIC_NOT_FOUND',
    });
    const topics = ['one', 'two', 'three'].map((name) => `persistent://e2e-auto/open/${name}`);
    // Each topic's lookups alternate between the instances, all at once.
    const answers = await Promise.all(
      topics.flatMap((topic) => Array.from({ length: 4 }, () => next().lookup.lookupTopic({ topic }))),
    );
    expect(answers.every((answer) => answer.instanceId === 'aw-1' && answer.role === OwnerRole.WRITER)).toBe(true);
    expect((await next().admin.listTopics({ namespace: 'e2e-auto/open' })).topics).toEqual([...topics].sort());
    expect((await next().admin.countTopics({ namespace: 'e2e-auto/open' })).count).toBe(3n);
    expect((await next().admin.getTopic({ topic: topics[0]! })).topic?.partitions).toBe(0);
    expect((await next().admin.countTopics({ namespace: 'e2e-auto/closed' })).count).toBe(0n);
  });
}

/** End to end: bad input. `next` hands out the clients of the next instance. */
function badInputFlow(next: () => Clients): void {
  it('answers bad input with the right code and reason and keeps serving', async () => {
    await next().admin.createTenant({ tenant: 'bad' });
    await next().admin.createNamespace({ namespace: 'bad/ns' });
    const cases: [() => Promise<unknown>, string, string][] = [
      [() => next().admin.createTenant({ tenant: 'a/b' }), 'INVALID_ARGUMENT', 'INVALID_TENANT_NAME'],
      [() => next().admin.createNamespace({ namespace: 'nobody/ns' }), 'NOT_FOUND', 'TENANT_NOT_FOUND'],
      [
        () => next().admin.createNamespace({ namespace: 'bad/x', policies: { ownerGroup: 'g'.repeat(100_000) } }),
        'INVALID_ARGUMENT',
        'INVALID_OWNER_GROUP',
      ],
      [
        () => next().admin.createNamespace({ namespace: 'bad/x', policies: { numberOfTopicBuckets: 1_000_000 } }),
        'INVALID_ARGUMENT',
        'INVALID_BUCKET_COUNT',
      ],
      [
        () => next().admin.createNamespace({ namespace: 'bad/x', policies: { maxTopics: -5 } }),
        'INVALID_ARGUMENT',
        'INVALID_MAX_TOPICS',
      ],
      [() => next().admin.createTopic({ topic: 'persistent://bad/ns/' }), 'INVALID_ARGUMENT', 'INVALID_TOPIC_NAME'],
      [() => next().admin.createTopic({ topic: '' }), 'INVALID_ARGUMENT', 'INVALID_TOPIC_NAME'],
      [
        () => next().admin.createTopic({ topic: 'bad/ns/x', partitions: 1_000_000 }),
        'INVALID_ARGUMENT',
        'INVALID_PARTITIONS',
      ],
      [
        () => next().admin.listTopics({ namespace: 'bad/ns', pageToken: '%%%' }),
        'INVALID_ARGUMENT',
        'INVALID_PAGE_TOKEN',
      ],
      [() => next().admin.getNamespace({ namespace: 'bad/none' }), 'NOT_FOUND', 'NAMESPACE_NOT_FOUND'],
      [() => next().lookup.registerOwner({}), 'INVALID_ARGUMENT', 'MISSING_OWNER'],
      [() => next().lookup.keepAliveOwner({ sessionId: 'x' }), 'INVALID_ARGUMENT', 'INVALID_SESSION_ID'],
      [() => next().store.get({ path: 'relative' }), 'INVALID_ARGUMENT', 'BAD_PATH'],
      [
        () =>
          next().store.put({ path: '/x', value: new Uint8Array(0), expected: { case: 'expectedVersion', value: -1n } }),
        'INVALID_ARGUMENT',
        'INVALID_VERSION',
      ],
      [() => next().store.children({ path: '/', pageSize: 1_000_000 }), 'INVALID_ARGUMENT', 'INVALID_PAGE_SIZE'],
    ];
    for (const [call, code, reason] of cases) expect(await failure(call())).toMatchObject({ code, reason });
    const badWatch = async () => {
      for await (const change of next().store.watch({ pathPrefix: 'relative' })) return change;
      return undefined;
    };
    expect(await failure(badWatch())).toMatchObject({ code: 'INVALID_ARGUMENT', reason: 'INVALID_PATH_PREFIX' });
    const oversize = await failure(next().admin.createTopics({ topics: [`bad/ns/${'x'.repeat(5 * 1024 * 1024)}`] }));
    expect(oversize.code).toBe('RESOURCE_EXHAUSTED');
    expect((await next().admin.getNamespace({ namespace: 'bad/ns' })).namespace?.name).toBe('bad/ns');
  });
}

/** End to end: watches. `next` hands out the clients of the next instance. */
function watchFlow(next: () => Clients): void {
  it('streams store changes under a prefix to watchers', async () => {
    // Unique paths: on NATS, other test files publish metadata changes on the same subjects.
    const root = `/watched-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    const controller = new AbortController();
    const stream = next().store.watch({ pathPrefix: `${root}/` }, { signal: controller.signal });
    const seen: { path: string; kind: ChangeKind }[] = [];
    const reading = (async () => {
      try {
        for await (const change of stream) {
          seen.push({ path: change.path, kind: change.kind });
          if (change.path === `${root}/b`) break;
        }
      } catch (error) {
        if (!LedgerlineError.is(error, RpcReason.CANCELLED) && LedgerlineError.from(error).code !== 'CANCELLED')
          throw error;
      }
    })();
    // The watch is a hint stream: keep writing until it has been heard (it starts asynchronously).
    await eventually(async () => {
      await next().store.put({ path: `${root}/a`, value: new Uint8Array([1]) });
      await next().store.put({ path: `${root}-not`, value: new Uint8Array([1]) });
      return seen.some((change) => change.path === `${root}/a`);
    });
    // One instance makes both changes: the bus keeps order per publisher only, and
    // through two instances the creation of b could arrive before the deletion of a.
    const writer = next();
    await writer.store.delete({ path: `${root}/a` });
    await writer.store.put({ path: `${root}/b`, value: new Uint8Array([2]) });
    await reading;
    controller.abort();
    expect(seen.some((change) => change.path === `${root}-not`)).toBe(false);
    expect(seen).toContainEqual({ path: `${root}/a`, kind: ChangeKind.DELETED });
    expect(seen[seen.length - 1]).toEqual({ path: `${root}/b`, kind: ChangeKind.CREATED });
  });
}
