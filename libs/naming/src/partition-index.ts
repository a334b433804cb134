import { MAX_PARTITION_INDEX } from './limits.js';

/** The text between a partitioned topic's name and a partition's index. */
export const PARTITIONED_TOPIC_SUFFIX = '-partition-';

// No sign, no leading zeros, at most ten digits; the value is checked separately.
const CANONICAL_INDEX = /^(?:0|[1-9][0-9]{0,9})$/;

/**
 * Pulsar's partition index of a local name: the text after the LAST
 * `-partition-` when it is a canonical non-negative Java int, else -1.
 * Two deliberate differences from Pulsar: only ASCII digits count (Java's
 * `Integer.parseInt` also takes other scripts' digits, which would make
 * `partition(i)` produce a different name), and the base name before the
 * suffix must not be empty (`-partition-0` alone is an ordinary topic, so the
 * partitioned topic name is always a valid topic).
 */
export function partitionIndexOf(localName: string): number {
  const at = localName.lastIndexOf(PARTITIONED_TOPIC_SUFFIX);
  if (at <= 0) return -1;
  const digits = localName.slice(at + PARTITIONED_TOPIC_SUFFIX.length);
  if (!CANONICAL_INDEX.test(digits)) return -1;
  const index = Number(digits);
  return index <= MAX_PARTITION_INDEX ? index : -1;
}

/** The local name of the partitioned topic a local name belongs to (itself when it is not a partition). */
export function partitionedLocalName(localName: string): string {
  return partitionIndexOf(localName) === -1
    ? localName
    : localName.slice(0, localName.lastIndexOf(PARTITIONED_TOPIC_SUFFIX));
}
