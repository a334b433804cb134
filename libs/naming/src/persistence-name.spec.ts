import fc from 'fast-check';
import { LedgerlineError } from '@ledgerline/errors';
import { MAX_TOPIC_BUCKETS } from './limits.js';
import { NamespaceName } from './namespace-name.js';
import { parsePersistenceName } from './parse-persistence-name.js';
import {
  bucketSegment,
  managedLedgerPath,
  namespacePersistencePrefix,
  parseBucketSegment,
  persistenceName,
  topicListingPaths,
} from './persistence-name.js';
import { topicBucket } from './topic-bucket.js';
import { TopicName } from './topic-name.js';
import { expectNamingError } from './testing/naming-expectations.js';

const SEED_TOPICS = [
  'nptopic1',
  'nptopic2',
  'ptopic-partition-0',
  'ptopic-partition-1',
  'ptopic-partition-2',
  'ptopic-partition-3',
];

describe('persistenceName and managedLedgerPath', () => {
  it('lays out the PIP-157 example without buckets', () => {
    expect(SEED_TOPICS.map((local) => managedLedgerPath(`persistent://tenant/namespace/${local}`, 1))).toEqual([
      '/managed-ledgers/tenant/namespace/persistent/nptopic1',
      '/managed-ledgers/tenant/namespace/persistent/nptopic2',
      '/managed-ledgers/tenant/namespace/persistent/ptopic-partition-0',
      '/managed-ledgers/tenant/namespace/persistent/ptopic-partition-1',
      '/managed-ledgers/tenant/namespace/persistent/ptopic-partition-2',
      '/managed-ledgers/tenant/namespace/persistent/ptopic-partition-3',
    ]);
  });

  it('lays out the PIP-157 example exactly with 3 buckets', () => {
    const base = TopicName.parse('persistent://tenant/namespace/ptopic');
    const topics = [
      TopicName.parse('tenant/namespace/nptopic1'),
      TopicName.parse('tenant/namespace/nptopic2'),
      ...[0, 1, 2, 3].map((index) => base.partition(index)),
    ];
    expect(topics.map((topic) => managedLedgerPath(topic, 3)).sort()).toEqual([
      '/managed-ledgers/tenant/namespace/persistent/$0/ptopic-partition-0',
      '/managed-ledgers/tenant/namespace/persistent/$0/ptopic-partition-3',
      '/managed-ledgers/tenant/namespace/persistent/$1/nptopic2',
      '/managed-ledgers/tenant/namespace/persistent/$1/ptopic-partition-1',
      '/managed-ledgers/tenant/namespace/persistent/$2/nptopic1',
      '/managed-ledgers/tenant/namespace/persistent/$2/ptopic-partition-2',
    ]);
  });

  it('encodes the local name and hashes the unencoded one', () => {
    expect(persistenceName('persistent://t/ns/a b$c', 1)).toBe('t/ns/persistent/a+b%24c');
    expect(persistenceName('non-persistent://t/ns/caf\u00e9', 1)).toBe('t/ns/non-persistent/caf%C3%A9');
    expect(persistenceName('persistent://t/ns/DESIGNING WORKHOUSES', 10)).toBe(
      `t/ns/persistent/$${2 ** 31 % 10}/DESIGNING+WORKHOUSES`,
    );
    expect(persistenceName('t/ns/caf\u00e9', 7)).toBe('t/ns/persistent/$4/caf%C3%A9');
  });

  it('rejects bad topics and bucket counts', () => {
    expectNamingError(() => persistenceName('t/ns/x', 0), 'INVALID_BUCKET_COUNT');
    expectNamingError(() => persistenceName('t/ns/x', MAX_TOPIC_BUCKETS + 1), 'INVALID_BUCKET_COUNT');
    expectNamingError(() => managedLedgerPath('kafka://t/ns/x', 2), 'INVALID_TOPIC_NAME');
  });
});

describe('namespace and bucket helpers', () => {
  it('builds the namespace prefix and listing paths', () => {
    expect(namespacePersistencePrefix('t/ns')).toBe('/managed-ledgers/t/ns/persistent');
    expect(namespacePersistencePrefix(NamespaceName.parse('t/ns'), 'non-persistent')).toBe(
      '/managed-ledgers/t/ns/non-persistent',
    );
    expect(topicListingPaths('t/ns', 1)).toEqual(['/managed-ledgers/t/ns/persistent']);
    expect(topicListingPaths('t/ns', 3)).toEqual([
      '/managed-ledgers/t/ns/persistent/$0',
      '/managed-ledgers/t/ns/persistent/$1',
      '/managed-ledgers/t/ns/persistent/$2',
    ]);
    expectNamingError(() => namespacePersistencePrefix('t'), 'INVALID_NAMESPACE_NAME');
    expectNamingError(() => namespacePersistencePrefix('t/ns', 'other' as 'persistent'), 'INVALID_TOPIC_NAME');
  });

  it('formats and parses bucket segments', () => {
    expect(bucketSegment(0)).toBe('$0');
    expect(bucketSegment(MAX_TOPIC_BUCKETS - 1)).toBe('$65535');
    expect(parseBucketSegment('$17')).toBe(17);
    for (const bad of [-1, 1.5, MAX_TOPIC_BUCKETS]) expectNamingError(() => bucketSegment(bad), 'INVALID_BUCKET');
    for (const bad of ['$', '0', '$01', '$-1', '$1.0', '$65536', '$999999', '%240', ' $1']) {
      expectNamingError(() => parseBucketSegment(bad), 'INVALID_PERSISTENCE_NAME');
    }
  });
});

describe('parsePersistenceName', () => {
  it('inverts the example paths, with and without the managed-ledgers prefix', () => {
    const parsed = parsePersistenceName('/managed-ledgers/tenant/namespace/persistent/$2/nptopic1');
    expect(parsed.topic.toString()).toBe('persistent://tenant/namespace/nptopic1');
    expect(parsed.bucket).toBe(2);
    expect(parsePersistenceName('tenant/namespace/persistent/$2/nptopic1', 3).bucket).toBe(2);
    const flat = parsePersistenceName('tenant/namespace/persistent/ptopic-partition-3', 1);
    expect(flat.topic.partitionIndex).toBe(3);
    expect(flat.bucket).toBeNull();
  });

  it('decodes the local name, unlike Pulsar', () => {
    const parsed = parsePersistenceName('t/ns/non-persistent/a+b%24c%25d%C3%A9');
    expect(parsed.topic.domain).toBe('non-persistent');
    expect(parsed.topic.localName).toBe('a b$c%d\u00e9');
  });

  it.each([
    ['t/ns/persistent', 'too few segments'],
    ['t/ns/persistent/$0/x/y', 'too many segments'],
    ['t/ns/kafka/x', 'unknown domain'],
    ['t/ns/persistent/', 'empty local name'],
    ['t/ns/persistent/$0/', 'empty local name in a bucket'],
    ['t t/ns/persistent/x', 'bad tenant'],
    ['t/n*s/persistent/x', 'bad namespace'],
    ['/t/ns/persistent/x', 'leading slash without the prefix'],
    ['t/ns/persistent/a%2Fb', 'a local name with a slash'],
    ['t/ns/persistent/a%20b', 'a non-canonical space'],
    ['t/ns/persistent/caf%c3%a9', 'lower-case hex'],
    ['t/ns/persistent/a~b', 'an unencoded tilde'],
    ['t/ns/persistent/a%zz', 'a bad escape'],
    ['t/ns/persistent/%C3', 'bytes that are not UTF-8'],
    ['t/ns/persistent/$01/nptopic1', 'a non-canonical bucket'],
    ['t/ns/persistent/$x/nptopic1', 'a bucket that is not a number'],
    ['t/ns/persistent/$65536/nptopic1', 'a bucket beyond the maximum'],
    ['t/ns/persistent/nptopic1/$0', 'the bucket in the wrong place'],
  ])('rejects %j (%s) with INVALID_PERSISTENCE_NAME', (path) => {
    const error = expectNamingError(() => parsePersistenceName(path), 'INVALID_PERSISTENCE_NAME');
    expect(error.message).toContain('persistence name');
  });

  it('checks the bucket segment against the hash', () => {
    // 'a' hashes to 97, so its bucket is 97 mod n: $1 (n = 2, 3, 4, 6, ...), $0 (n = 97) and
    // $97 (any n > 97) are possible; $96 (n would have to divide 1) and $98 or more are not.
    expect(parsePersistenceName('t/ns/persistent/$1/a').bucket).toBe(1);
    expect(parsePersistenceName('t/ns/persistent/$0/a').bucket).toBe(0);
    expect(parsePersistenceName('t/ns/persistent/$97/a').bucket).toBe(97);
    expectNamingError(() => parsePersistenceName('t/ns/persistent/$96/a'), 'INVALID_PERSISTENCE_NAME');
    expectNamingError(() => parsePersistenceName('t/ns/persistent/$98/a'), 'INVALID_PERSISTENCE_NAME');
    expectNamingError(() => parsePersistenceName('t/ns/persistent/$500/a'), 'INVALID_PERSISTENCE_NAME');
    // The hash of 'nptopic1' is in $2 with 3 buckets, not $1 or $0.
    expectNamingError(() => parsePersistenceName('t/ns/persistent/$1/nptopic1', 3), 'INVALID_PERSISTENCE_NAME');
    expectNamingError(() => parsePersistenceName('t/ns/persistent/nptopic1', 3), 'INVALID_PERSISTENCE_NAME');
    expectNamingError(() => parsePersistenceName('t/ns/persistent/$0/nptopic1', 1), 'INVALID_PERSISTENCE_NAME');
    expectNamingError(() => parsePersistenceName('t/ns/persistent/nptopic1', 0), 'INVALID_BUCKET_COUNT');
  });

  it('inverts persistenceName for arbitrary topics and bucket counts', () => {
    const local = fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }).filter((value) => !value.includes('/'));
    const tricky = fc.string({
      unit: fc.constantFrom(' ', '+', '%', '$', '*', '~', '\u00e9', '\u{1F600}', 'x'),
      minLength: 1,
      maxLength: 12,
    });
    fc.assert(
      fc.property(
        fc.constantFrom('persistent', 'non-persistent'),
        fc.oneof(local, tricky),
        fc.oneof(fc.constant(1), fc.integer({ min: 1, max: MAX_TOPIC_BUCKETS })),
        (domain, localName, buckets) => {
          const topic = TopicName.of(domain, 'tenant', 'ns', localName);
          const path = persistenceName(topic, buckets);
          const expectedBucket = buckets === 1 ? null : topicBucket(localName, buckets);
          for (const parsed of [
            parsePersistenceName(path),
            parsePersistenceName(path, buckets),
            parsePersistenceName(managedLedgerPath(topic, buckets)),
          ]) {
            expect(parsed.topic.equals(topic)).toBe(true);
            expect(parsed.bucket).toBe(expectedBucket);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never throws anything but INVALID_ARGUMENT on arbitrary strings', () => {
    const pieces = fc.constantFrom(
      '/managed-ledgers/',
      't/',
      'ns/',
      'persistent/',
      '$0/',
      '$',
      '%',
      '%C3',
      '+',
      'x',
      '/',
    );
    const anyUnits = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)) });
    const arbitrary = fc.oneof(
      anyUnits,
      fc.array(pieces, { maxLength: 10 }).map((parts) => parts.join('')),
    );
    fc.assert(
      fc.property(arbitrary, fc.integer({ min: 1, max: 8 }), (value, buckets) => {
        for (const run of [
          () => parsePersistenceName(value),
          () => parsePersistenceName(value, buckets),
          () => persistenceName(value, buckets),
          () => namespacePersistencePrefix(value),
        ]) {
          try {
            run();
          } catch (thrown) {
            expect(thrown).toBeInstanceOf(LedgerlineError);
            expect((thrown as LedgerlineError).code).toBe('INVALID_ARGUMENT');
          }
        }
      }),
      { numRuns: 400 },
    );
  });
});
