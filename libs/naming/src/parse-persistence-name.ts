import { LedgerlineError } from '@ledgerline/errors';
import { MAX_PERSISTENCE_NAME_LENGTH, MAX_TOPIC_BUCKETS } from './limits.js';
import { namingError, quote, NamingErrorReason } from './naming-error.js';
import { MANAGED_LEDGERS_ROOT, parseBucketSegment } from './persistence-name.js';
import { javaStringHashCode, topicBucket, validateBucketCount } from './topic-bucket.js';
import { TopicName, validateDomain } from './topic-name.js';
import { decodeLocalName, encodeLocalName } from './url-codec.js';

/** What `parsePersistenceName` found: the topic, and its bucket (null in the unbucketed layout, n = 1). */
export interface ParsedPersistenceName {
  topic: TopicName;
  bucket: number | null;
}

/**
 * The exact inverse of `persistenceName` (and of `managedLedgerPath`: a leading
 * `/managed-ledgers/` is accepted). Unlike Pulsar it URL-decodes the local
 * name, and it accepts only the canonical encoding, so every topic has one
 * name and every accepted name maps back to the same string.
 *
 * With `numberOfTopicBuckets` the layout must be exactly the one persistenceName
 * writes for that n. Without it, a bucket segment `$<b>` must be one that some
 * allowed n (2 to MAX_TOPIC_BUCKETS, n > b) assigns to this name.
 * Every failure is INVALID_PERSISTENCE_NAME naming the problem.
 */
export function parsePersistenceName(path: string, numberOfTopicBuckets?: number): ParsedPersistenceName {
  const buckets = numberOfTopicBuckets === undefined ? undefined : validateBucketCount(numberOfTopicBuckets);
  if (typeof path !== 'string' || path.length > MAX_PERSISTENCE_NAME_LENGTH) {
    throw namingError(
      NamingErrorReason.INVALID_PERSISTENCE_NAME,
      `persistence name ${quote(path)} must be a string of at most ${MAX_PERSISTENCE_NAME_LENGTH} characters`,
    );
  }
  try {
    return parseSegments(path, buckets);
  } catch (thrown) {
    // Inner checks describe the problem; the path is added once, here.
    if (thrown instanceof LedgerlineError) {
      throw namingError(
        NamingErrorReason.INVALID_PERSISTENCE_NAME,
        `persistence name ${quote(path)} is invalid: ${thrown.message}`,
      );
    }
    throw thrown;
  }
}

function parseSegments(path: string, buckets: number | undefined): ParsedPersistenceName {
  const relative = path.startsWith(`${MANAGED_LEDGERS_ROOT}/`) ? path.slice(MANAGED_LEDGERS_ROOT.length + 1) : path;
  const parts = relative.split('/');
  if (parts.length !== 4 && parts.length !== 5) {
    throw namingError(
      NamingErrorReason.INVALID_PERSISTENCE_NAME,
      'it must have the form <tenant>/<namespace>/<domain>/[$<bucket>/]<encoded local name>',
    );
  }
  const [tenant, namespace, domain] = parts as [string, string, string];
  const encoded = parts[parts.length - 1]!;
  const localName = decodeLocalName(encoded);
  if (encodeLocalName(localName) !== encoded) {
    throw namingError(
      NamingErrorReason.INVALID_PERSISTENCE_NAME,
      `the local name is not encoded the way URLEncoder does it (expected ${quote(encodeLocalName(localName))})`,
    );
  }
  const topic = TopicName.of(validateDomain(domain), tenant, namespace, localName);
  const bucket = parts.length === 5 ? parseBucketSegment(parts[3]!) : null;
  checkBucket(localName, bucket, buckets);
  return { topic, bucket };
}

function checkBucket(localName: string, bucket: number | null, buckets: number | undefined): void {
  if (buckets !== undefined) {
    const expected = buckets === 1 ? null : topicBucket(localName, buckets);
    if (bucket !== expected) {
      const where = expected === null ? 'no bucket segment' : `bucket segment $${expected}`;
      throw namingError(
        NamingErrorReason.INVALID_PERSISTENCE_NAME,
        `it should have ${where} with numberOfTopicBuckets = ${buckets}`,
      );
    }
  } else if (bucket !== null && !someBucketCountGives(Math.abs(javaStringHashCode(localName)), bucket)) {
    throw namingError(
      NamingErrorReason.INVALID_PERSISTENCE_NAME,
      `bucket segment $${bucket} is not the bucket of its local name for any bucket count from 2 to ${MAX_TOPIC_BUCKETS}`,
    );
  }
}

/**
 * True when some n in [max(2, bucket + 1), MAX_TOPIC_BUCKETS] has
 * hash mod n == bucket, i.e. n divides hash - bucket. Trial division is bounded
 * by MAX_TOPIC_BUCKETS steps and usually stops at the first few candidates.
 */
function someBucketCountGives(absoluteHash: number, bucket: number): boolean {
  const difference = absoluteHash - bucket;
  if (difference < 0) return false;
  if (difference === 0) return true;
  const last = Math.min(MAX_TOPIC_BUCKETS, difference);
  for (let count = Math.max(2, bucket + 1); count <= last; count++) {
    if (difference % count === 0) return true;
  }
  return false;
}
