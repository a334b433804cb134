import fc from 'fast-check';
import { LedgerlineError } from '@ledgerline/errors';
import { MAX_TOPIC_BUCKETS } from './limits.js';
import { javaStringHashCode, topicBucket, validateBucketCount } from './topic-bucket.js';

// Computed with java.lang.String.hashCode on OpenJDK 17:
// [string, hashCode, |h| % 3, |h| % 7, |h| % 65536] where |h| is the true absolute value.
const JAVA_VECTORS: Array<[string, number, number, number, number]> = [
  ['', 0, 0, 0, 0],
  ['a', 97, 1, 6, 97],
  ['hello', 99162322, 1, 0, 6354],
  ['polygenelubricants', -2147483648, 2, 2, 0],
  ['GydZG_', -2147483648, 2, 2, 0],
  ['DESIGNING WORKHOUSES', -2147483648, 2, 2, 0],
  ['nptopic1', -1816261340, 2, 5, 62172],
  ['ptopic-partition-3', 816219138, 0, 0, 33794],
  ['caf\u00e9', 3045921, 0, 4, 31265],
  ['\u65e5\u672c\u8a9e', 25921943, 2, 5, 35223],
  ['\u{1F600}', 1772899, 1, 2, 3427],
  ['emoji-\u{1F44D}\u{1F3FD}', -1889743848, 0, 6, 13288],
  ['\u0000', 0, 0, 0, 0],
  ['\uffff\uffff\uffff', 65076255, 0, 6, 64543],
  ['a b*c~d$e/f%g', -842930756, 2, 3, 6724],
  ['\u00ff\u0100\u07ff\u0800', 7908226, 1, 4, 43906],
  ['\u0100\u{1D11E}z', 62570832, 0, 2, 49488],
  ['\ufeffbom', 1944824417, 2, 4, 43617],
  ['The quick brown fox jumps over the lazy dog', -609428141, 2, 0, 8877],
];

// An independent model of Java's hashCode: the exact polynomial in BigInt, then
// reduced to a signed 32-bit int.
function referenceHash(value: string): number {
  let hash = 0n;
  for (let index = 0; index < value.length; index++) hash = hash * 31n + BigInt(value.charCodeAt(index));
  return Number(BigInt.asIntN(32, hash));
}

// Any UTF-16 code unit, lone surrogates included: hashing never cares about well-formedness.
const anyUnits = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)) });

describe('javaStringHashCode', () => {
  it.each(JAVA_VECTORS)('matches Java for %j', (value, hash) => {
    expect(javaStringHashCode(value)).toBe(hash);
  });

  it('hashes an astral character as its two surrogates', () => {
    expect(javaStringHashCode('\u{1F600}')).toBe(javaStringHashCode('\ud83d\ude00'));
    expect(javaStringHashCode('\u{1F600}')).toBe(0xd83d * 31 + 0xde00);
  });

  it('agrees with the exact polynomial reduced to 32 bits', () => {
    fc.assert(
      fc.property(anyUnits, (value) => {
        expect(javaStringHashCode(value)).toBe(referenceHash(value));
      }),
      { numRuns: 300 },
    );
  });
});

describe('topicBucket', () => {
  it.each(JAVA_VECTORS)('gives |hash| mod n for %j', (value, _hash, mod3, mod7, mod65536) => {
    expect(topicBucket(value, 3)).toBe(mod3);
    expect(topicBucket(value, 7)).toBe(mod7);
    expect(topicBucket(value, MAX_TOPIC_BUCKETS)).toBe(mod65536);
  });

  it('maps a hash of -2^31 to 2^31 mod n, never to a negative bucket', () => {
    for (const value of ['polygenelubricants', 'GydZG_', 'DESIGNING WORKHOUSES']) {
      for (const buckets of [3, 5, 7, 10, 1000, 65535]) {
        expect(topicBucket(value, buckets)).toBe(2 ** 31 % buckets);
      }
    }
    expect(topicBucket('polygenelubricants', 3)).toBe(2);
    expect(topicBucket('polygenelubricants', 10)).toBe(8);
  });

  it('places the PIP-157 example topics in the proposal buckets with 3 buckets', () => {
    const layout: Record<string, number> = {
      'ptopic-partition-0': 0,
      'ptopic-partition-3': 0,
      nptopic2: 1,
      'ptopic-partition-1': 1,
      nptopic1: 2,
      'ptopic-partition-2': 2,
    };
    for (const [localName, bucket] of Object.entries(layout)) expect(topicBucket(localName, 3)).toBe(bucket);
  });

  it('always gives bucket 0 with one bucket', () => {
    fc.assert(
      fc.property(anyUnits, (value) => topicBucket(value, 1) === 0),
      { numRuns: 100 },
    );
  });

  it('always lands in [0, n) and matches the BigInt model', () => {
    fc.assert(
      fc.property(anyUnits, fc.integer({ min: 1, max: MAX_TOPIC_BUCKETS }), (value, buckets) => {
        const bucket = topicBucket(value, buckets);
        expect(Number.isInteger(bucket)).toBe(true);
        expect(bucket).toBeGreaterThanOrEqual(0);
        expect(bucket).toBeLessThan(buckets);
        expect(BigInt(bucket)).toBe(BigInt(Math.abs(referenceHash(value))) % BigInt(buckets));
      }),
      { numRuns: 300 },
    );
  });

  it.each([0, -1, 1.5, MAX_TOPIC_BUCKETS + 1, NaN, Infinity, '3', null, undefined])(
    'rejects the bucket count %p with INVALID_BUCKET_COUNT',
    (buckets) => {
      expect(() => topicBucket('x', buckets as number)).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT', reason: 'INVALID_BUCKET_COUNT' }),
      );
      expect(() => validateBucketCount(buckets)).toThrow(LedgerlineError);
    },
  );

  it('accepts the documented maximum bucket count', () => {
    expect(validateBucketCount(MAX_TOPIC_BUCKETS)).toBe(MAX_TOPIC_BUCKETS);
    expect(MAX_TOPIC_BUCKETS).toBe(65536);
  });
});
