import { MAX_TOPIC_BUCKETS } from './limits.js';
import { namingError, quote, NamingErrorReason } from './naming-error.js';

/**
 * Java's `String.hashCode`: `s[0]*31^(n-1) + ... + s[n-1]` over UTF-16 code
 * units with 32-bit signed wrap-around. JavaScript strings are UTF-16 too, so
 * an astral character counts as its two surrogates, exactly as in Java.
 */
export function javaStringHashCode(value: string): number {
  let hash = 0;
  for (let index = 0; index < value.length; index++) {
    hash = (Math.imul(31, hash) + value.charCodeAt(index)) | 0;
  }
  return hash;
}

/**
 * Checks a `numberOfTopicBuckets` value: an integer from 1 (no bucketing) to
 * MAX_TOPIC_BUCKETS. Returns it so that callers can validate inline.
 */
export function validateBucketCount(numberOfTopicBuckets: unknown): number {
  if (
    typeof numberOfTopicBuckets !== 'number' ||
    !Number.isInteger(numberOfTopicBuckets) ||
    numberOfTopicBuckets < 1 ||
    numberOfTopicBuckets > MAX_TOPIC_BUCKETS
  ) {
    const shown = typeof numberOfTopicBuckets === 'number' ? String(numberOfTopicBuckets) : quote(numberOfTopicBuckets);
    throw namingError(
      NamingErrorReason.INVALID_BUCKET_COUNT,
      `numberOfTopicBuckets must be an integer from 1 to ${MAX_TOPIC_BUCKETS}, got ${shown}`,
    );
  }
  return numberOfTopicBuckets;
}

/**
 * The PIP-157 bucket of a topic: |hashCode(localName)| mod n. The absolute
 * value is taken in double precision, so a hash of -2^31 gives 2^31 mod n
 * rather than Java's `Math.abs` overflow to a negative bucket.
 */
export function topicBucket(localName: string, numberOfTopicBuckets: number): number {
  const buckets = validateBucketCount(numberOfTopicBuckets);
  if (typeof localName !== 'string') {
    throw namingError(
      NamingErrorReason.INVALID_TOPIC_NAME,
      `a topic local name must be a string, got ${quote(localName)}`,
    );
  }
  return Math.abs(javaStringHashCode(localName)) % buckets;
}
