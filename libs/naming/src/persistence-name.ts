import { MAX_TOPIC_BUCKETS } from './limits.js';
import { NamespaceName } from './namespace-name.js';
import { namingError, quote, NamingErrorReason } from './naming-error.js';
import { TopicName, validateDomain, type TopicDomain } from './topic-name.js';
import { topicBucket, validateBucketCount } from './topic-bucket.js';
import { encodeLocalName } from './url-codec.js';

/** The root under which every managed ledger's metadata lives, as in Pulsar. */
export const MANAGED_LEDGERS_ROOT = '/managed-ledgers';

const CANONICAL_BUCKET_SEGMENT = /^\$(?:0|[1-9][0-9]{0,4})$/;

function toTopic(topic: TopicName | string): TopicName {
  return topic instanceof TopicName ? topic : TopicName.parse(topic);
}

function toNamespace(namespace: NamespaceName | string): NamespaceName {
  return namespace instanceof NamespaceName ? namespace : NamespaceName.parse(namespace);
}

/** The path segment of bucket `bucket`: `$<bucket>`, for a bucket from 0 to MAX_TOPIC_BUCKETS - 1. */
export function bucketSegment(bucket: number): string {
  if (!Number.isInteger(bucket) || bucket < 0 || bucket >= MAX_TOPIC_BUCKETS) {
    throw namingError(
      NamingErrorReason.INVALID_BUCKET,
      `a bucket must be an integer from 0 to ${MAX_TOPIC_BUCKETS - 1}, got ${typeof bucket === 'number' ? bucket : quote(bucket)}`,
    );
  }
  return `$${bucket}`;
}

/** The bucket a `$<b>` segment names; anything but the canonical form throws INVALID_PERSISTENCE_NAME. */
export function parseBucketSegment(segment: string): number {
  const bucket = typeof segment === 'string' && CANONICAL_BUCKET_SEGMENT.test(segment) ? Number(segment.slice(1)) : NaN;
  if (!(bucket < MAX_TOPIC_BUCKETS)) {
    throw namingError(
      NamingErrorReason.INVALID_PERSISTENCE_NAME,
      `${quote(segment)} is not a bucket segment ($0 to $${MAX_TOPIC_BUCKETS - 1}, no leading zeros)`,
    );
  }
  return bucket;
}

/** Where a namespace's topics of one domain live: `/managed-ledgers/<tenant>/<namespace>/<domain>`. */
export function namespacePersistencePrefix(
  namespace: NamespaceName | string,
  domain: TopicDomain = 'persistent',
): string {
  return `${MANAGED_LEDGERS_ROOT}/${toNamespace(namespace).toString()}/${validateDomain(domain)}`;
}

/**
 * The directories whose children are a namespace's topics: the namespace
 * prefix itself when n = 1, else one `$<b>` directory per bucket, in order.
 */
export function topicListingPaths(
  namespace: NamespaceName | string,
  numberOfTopicBuckets: number,
  domain: TopicDomain = 'persistent',
): string[] {
  const buckets = validateBucketCount(numberOfTopicBuckets);
  const prefix = namespacePersistencePrefix(namespace, domain);
  if (buckets === 1) return [prefix];
  return Array.from({ length: buckets }, (_, bucket) => `${prefix}/$${bucket}`);
}

/**
 * A topic's managed-ledger name: `tenant/namespace/<domain>/<encoded local>`
 * when n = 1, `tenant/namespace/<domain>/$<b>/<encoded local>` when n > 1, with
 * b = topicBucket(localName, n). Pulsar's form, plus PIP-157's bucket segment.
 */
export function persistenceName(topic: TopicName | string, numberOfTopicBuckets: number): string {
  const buckets = validateBucketCount(numberOfTopicBuckets);
  const name = toTopic(topic);
  const prefix = `${name.namespaceName.toString()}/${name.domain}/`;
  const encoded = encodeLocalName(name.localName);
  return buckets === 1 ? prefix + encoded : `${prefix}$${topicBucket(name.localName, buckets)}/${encoded}`;
}

/** The metadata path of a topic's managed-ledger info: `/managed-ledgers/` + persistenceName. */
export function managedLedgerPath(topic: TopicName | string, numberOfTopicBuckets: number): string {
  return `${MANAGED_LEDGERS_ROOT}/${persistenceName(topic, numberOfTopicBuckets)}`;
}
