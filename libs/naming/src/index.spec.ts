import * as naming from './index.js';

describe('@ledgerline/naming public API', () => {
  it('exports every name the rest of the system uses', () => {
    for (const name of [
      'javaStringHashCode',
      'topicBucket',
      'encodeLocalName',
      'decodeLocalName',
      'persistenceName',
      'managedLedgerPath',
      'parsePersistenceName',
      'namespacePersistencePrefix',
      'topicListingPaths',
      'bucketSegment',
      'parseBucketSegment',
      'validateBucketCount',
      'validateTenant',
      'validateNamespace',
      'validateLocalName',
      'validateDomain',
    ] as const) {
      expect(typeof naming[name]).toBe('function');
    }
    expect(typeof naming.NamespaceName.parse).toBe('function');
    expect(typeof naming.TopicName.parse).toBe('function');
    expect(naming.MAX_TOPIC_BUCKETS).toBe(65536);
    expect(naming.MANAGED_LEDGERS_ROOT).toBe('/managed-ledgers');
  });

  it('round-trips the longest names the limits allow', () => {
    const topic = naming.TopicName.of(
      'non-persistent',
      't'.repeat(naming.MAX_TENANT_NAME_LENGTH),
      'n'.repeat(naming.MAX_NAMESPACE_NAME_LENGTH),
      '\u4e00'.repeat(naming.MAX_LOCAL_NAME_LENGTH),
    );
    expect(naming.TopicName.parse(topic.toString()).equals(topic)).toBe(true);
    const path = naming.managedLedgerPath(topic, naming.MAX_TOPIC_BUCKETS);
    expect(path.length).toBeLessThanOrEqual(naming.MAX_PERSISTENCE_NAME_LENGTH);
    expect(naming.parsePersistenceName(path, naming.MAX_TOPIC_BUCKETS).topic.equals(topic)).toBe(true);
  });
});
