import { x86 } from 'murmurhash3js-revisited';

/** The key Pulsar hashes for a message without one, so all of them go to one consumer. */
const NONE_KEY = 'NONE_KEY';
const encoder = new TextEncoder();

/** Murmur3 (32-bit, seed 0) of the key's UTF-8 bytes, kept non-negative as Pulsar's Murmur3_32Hash.makeHash. */
export function stickyKeyHash(key: string | undefined): number {
  return x86.hash32(encoder.encode(key ?? NONE_KEY), 0) & 0x7fffffff;
}

interface RingPoint<C> {
  hash: number;
  consumer: C;
}

/**
 * Pulsar's ConsistentHashingStickyKeyConsumerSelector: every consumer takes
 * `pointsPerConsumer` points on a ring of 31-bit hashes, named after the
 * consumer, and a key goes to the consumer of the first point at or after
 * its hash. A consumer joining or leaving moves only the keys next to its
 * points, and the same names give the same ring on every owner.
 */
export class StickyKeyConsumerSelector<C> {
  private points: RingPoint<C>[] = [];

  constructor(private readonly pointsPerConsumer: number) {}

  /** `ringName` must differ between consumers of one subscription (the name, made unique). */
  add(consumer: C, ringName: string): void {
    for (let i = 0; i < this.pointsPerConsumer; i++) {
      this.points.push({ hash: stickyKeyHash(`${ringName}${i}`), consumer });
    }
    // Equal hashes keep their order of arrival: the earlier consumer wins the point (stable sort).
    this.points.sort((a, b) => a.hash - b.hash);
  }

  remove(consumer: C): void {
    this.points = this.points.filter((p) => p.consumer !== consumer);
  }

  select(keyHash: number): C | undefined {
    const points = this.points;
    if (points.length === 0) return undefined;
    let low = 0;
    let high = points.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((points[mid] as RingPoint<C>).hash < keyHash) low = mid + 1;
      else high = mid;
    }
    return (points[low] ?? (points[0] as RingPoint<C>)).consumer;
  }
}
