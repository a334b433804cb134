import fc from 'fast-check';

/**
 * Request generators for the fuzz suite: every field of every request of the
 * metadata service's three gRPC services, drawn from a mix of values that
 * reach deep into the service (names of seeded tenants, namespaces, topics
 * and sessions) and values that should be refused (unicode, lone surrogates,
 * control characters, huge lengths, negative and huge numbers, out-of-range
 * enums, missing fields).
 */
export interface FuzzSeeds {
  tenant: string;
  namespace: string;
  readerNamespace: string;
  /** A namespace whose policy lets lookups create topics (allowAutoTopicCreation), with a small maxTopics. */
  autoNamespace: string;
  topic: string;
  partitionedTopic: string;
  ownerGroup: string;
  readerGroup: string;
  sessionId: string;
}

/** Longest generated string: well past every name and path limit, well under the 4 MiB message limit. */
const HUGE_LENGTH = 200_000;

const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));

const oddities = fc.constantFrom(
  '',
  '/',
  '.',
  '..',
  '//',
  '%',
  '%zz',
  '$0',
  '$~',
  '\u0000',
  '\uD800',
  '\uDC00x',
  '\u{1F600}',
  ' ',
  'a b',
  '*',
  '>',
  'ä',
);

/** Any string: printable, unicode, raw code units (lone surrogates, controls), oddities, or huge. */
export const chaosString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.string({ maxLength: 40 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }), weight: 2 },
  { arbitrary: fc.string({ unit: anyCodeUnit, maxLength: 40 }), weight: 3 },
  { arbitrary: oddities, weight: 3 },
  {
    arbitrary: fc
      .tuple(fc.integer({ min: 256, max: HUGE_LENGTH }), fc.constantFrom('x', 'é', '\u{1F600}', '/', '\uD800'))
      .map(([length, unit]) => unit.repeat(Math.ceil(length / unit.length))),
    weight: 1,
  },
);

/** A value close to a valid one: a seed, garbage, or a seed with garbage appended or inserted. */
function near(...valid: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...valid), weight: 3 },
    { arbitrary: chaosString, weight: 2 },
    {
      arbitrary: fc.tuple(fc.constantFrom(...valid), chaosString).map(([seed, junk]) => seed + junk),
      weight: 2,
    },
    {
      arbitrary: fc.tuple(fc.constantFrom(...valid), chaosString).map(([seed, junk]) => `${seed}/${junk}`),
      weight: 1,
    },
  );
}

const int32 = fc.oneof(
  fc.constantFrom(0, 1, 2, 3, 16, 1024, 1025, 10_000, 10_001, -1, 2 ** 31 - 1, -(2 ** 31)),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
);
const int64 = fc.oneof(
  fc.constantFrom(0n, 1n, -1n, 100n, 10_000n, 2n ** 53n, 2n ** 63n - 1n, -(2n ** 63n)),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
);
/** proto3 enums are open: any int32 may arrive. */
const enumValue = fc.oneof(fc.constantFrom(0, 1, 2, 3), int32);

function optionalFields<T extends Record<string, fc.Arbitrary<unknown>>>(fields: T) {
  return fc.record(fields, { requiredKeys: [] });
}

export function requestArbitraries(seeds: FuzzSeeds) {
  const tenant = near(seeds.tenant, 'fresh-tenant');
  const namespace = near(
    seeds.namespace,
    seeds.readerNamespace,
    seeds.autoNamespace,
    `${seeds.tenant}/fresh`,
    'nobody/ns',
  );
  const topic = near(
    seeds.topic,
    seeds.partitionedTopic,
    `${seeds.partitionedTopic}-partition-1`,
    `persistent://${seeds.readerNamespace}/t`,
    `non-persistent://${seeds.namespace}/t`,
    `${seeds.namespace}/fresh`,
    `${seeds.autoNamespace}/fresh`,
    'persistent://nobody/ns/t',
  );
  const group = near(seeds.ownerGroup, seeds.readerGroup, '');
  // Kafka group ids: ordinary, path-like, too long for an index path, chaos.
  const kafkaGroup = near('billing', '.', '..', 'a/b', 'x'.repeat(1100));
  const sessionId = near(seeds.sessionId, '00000000-0000-0000-0000-000000000000', '');
  // Unregistering the seeded session would end every later lease case early: it ends an unknown one instead.
  const otherSessionId = near('00000000-0000-0000-0000-000000000000', '');
  const path = near('/', '/admin', '/managed-ledgers', '/fuzz', '/leases', '/owners', '/sessions');
  const policies = optionalFields({
    numberOfTopicBuckets: int32,
    maxTopics: int32,
    retentionTimeMinutes: int64,
    retentionSizeMb: int64,
    ownerGroup: group,
    writerNamespace: namespace,
    readonly: fc.boolean(),
    allowAutoTopicCreation: fc.boolean(),
  });
  const owner = optionalFields({
    instanceId: near('w-fuzz', 'r-fuzz'),
    role: enumValue,
    group,
    advertisedAddress: near('127.0.0.1:6650'),
    registeredAtMs: int64,
  });
  const expected = fc.oneof(
    fc.constant({ case: undefined }),
    int64.map((value) => ({ case: 'expectedVersion' as const, value })),
    fc.boolean().map((value) => ({ case: 'expectAbsent' as const, value })),
  );
  return {
    AdminService: {
      createTenant: optionalFields({ tenant, adminRoles: fc.array(chaosString, { maxLength: 80 }) }),
      listTenants: fc.constant({}),
      getTenant: optionalFields({ tenant }),
      deleteTenant: optionalFields({ tenant }),
      createNamespace: optionalFields({ namespace, policies }),
      getNamespace: optionalFields({ namespace }),
      updateNamespace: optionalFields({ namespace, policies }),
      setWriterNamespace: optionalFields({ namespace, writerNamespace: namespace }),
      listNamespaces: optionalFields({ tenant }),
      deleteNamespace: optionalFields({ namespace }),
      createTopic: optionalFields({ topic, partitions: int32 }),
      createTopics: optionalFields({ topics: fc.array(topic, { maxLength: 40 }) }),
      getTopic: optionalFields({ topic }),
      // Ids of every length around 16, the all-zero id among them.
      getTopicById: optionalFields({
        namespace,
        topicId: fc.oneof(fc.uint8Array({ maxLength: 20 }), fc.constant(new Uint8Array(16))),
      }),
      updatePartitionedTopic: optionalFields({ topic, partitions: int32, validateOnly: fc.boolean() }),
      deleteTopic: optionalFields({ topic }),
      listTopics: optionalFields({ namespace, pageToken: chaosString, pageSize: int32 }),
      countTopics: optionalFields({ namespace }),
      finishTopicDeletion: optionalFields({
        managedLedgerPath: fc.oneof(
          topic.map(
            (name) =>
              `/managed-ledgers/${name.replace(/^[a-z-]+:\/\//, '').replace(/^([^/]*\/[^/]*)\//, '$1/persistent/')}`,
          ),
          chaosString,
        ),
        expectedVersion: int64,
      }),
      grantPermission: optionalFields({
        namespace,
        role: fc.oneof(near('app', 'ops'), chaosString),
        actions: fc.array(enumValue, { maxLength: 8 }),
      }),
      revokePermission: optionalFields({ namespace, role: fc.oneof(near('app'), chaosString) }),
      getPermissions: optionalFields({ namespace }),
      getBalancerStatus: fc.constant({}),
      addKafkaGroupPartition: optionalFields({ topic, group: kafkaGroup, maxPartitions: int32 }),
      getKafkaGroupIndex: optionalFields({ namespace, group: kafkaGroup }),
      updateKafkaGroupIndex: optionalFields({
        namespace,
        group: kafkaGroup,
        removeTopics: fc.array(topic, { maxLength: 8 }),
        markComplete: fc.boolean(),
      }),
      deleteKafkaGroupIndex: optionalFields({ namespace, group: kafkaGroup, expectedVersion: int64 }),
    },
    LookupService: {
      registerOwner: optionalFields({ owner, sessionTtlMs: int64 }),
      keepAliveOwner: optionalFields({
        sessionId,
        load: optionalFields({
          topicsOwned: int32,
          messagesInPerSecond: fc.double(),
          bytesInPerSecond: fc.double(),
          messagesOutPerSecond: fc.double(),
          bytesOutPerSecond: fc.double(),
          consumers: int32,
          pendingEntries: int64,
          storageBytes: int64,
          cpuShare: fc.double(),
          intervalMs: int64,
        }),
      }),
      watchOwnerSession: optionalFields({ sessionId }),
      unregisterOwner: optionalFields({ sessionId: otherSessionId }),
      listOwners: optionalFields({ group, role: enumValue }),
      acquireLease: optionalFields({ topic, sessionId }),
      renewLease: optionalFields({ topic, sessionId }),
      confirmLeases: optionalFields({ sessionId, topics: fc.array(topic, { maxLength: 4 }) }),
      releaseLease: optionalFields({ topic, sessionId }),
      getLease: optionalFields({ topic }),
      transferLease: optionalFields({ topic, sessionId, targetInstanceId: near('w-fuzz', 'r-fuzz', '') }),
      reclaimLease: optionalFields({ topic, sessionId, version: int64 }),
      // Draining the seeded owner would change where later lookups place topics: an unknown session drains instead.
      setOwnerDraining: optionalFields({ sessionId: otherSessionId, draining: fc.boolean() }),
      lookupTopic: optionalFields({ topic, group }),
      allocateLedgerId: fc.constant({}),
    },
    MetadataStoreService: {
      get: optionalFields({ path }),
      exists: optionalFields({ path }),
      put: optionalFields({ path, value: fc.uint8Array({ maxLength: 4096 }), expected }),
      delete: optionalFields({ path, expectedVersion: int64 }),
      children: optionalFields({ path, pageToken: chaosString, pageSize: int32 }),
      watch: optionalFields({ pathPrefix: path }),
    },
  } satisfies Record<string, Record<string, fc.Arbitrary<object>>>;
}
