import { javaStringHashCode } from '@ledgerline/naming';

/**
 * How a producer on a partitioned topic picks a partition for a message.
 * Both modes send a keyed message to the partition of its key's hash;
 * they differ for messages without a key:
 * - `round-robin` (the default, Pulsar's RoundRobinPartition): spread over all
 *   partitions, one after the other, or with batching on, switching partition
 *   every batching delay so that batches fill.
 * - `key-hash` (Pulsar's SinglePartition): all to one partition picked at random
 *   when the producer is created.
 */
export type RoutingMode = 'round-robin' | 'key-hash';

/** The routing modes, for validation and help texts. */
export const ROUTING_MODES: readonly RoutingMode[] = ['round-robin', 'key-hash'];

/**
 * The partition of a key as Pulsar's Java client computes it by default
 * (HashingScheme.JavaStringHash: `key.hashCode() & Integer.MAX_VALUE`, then
 * a sign-safe modulo), so a key lands on the same partition from both clients.
 */
export function keyHashPartition(key: string, partitions: number): number {
  return (javaStringHashCode(key) & 0x7fffffff) % partitions;
}

/** Picks the partition of each message; see RoutingMode. */
export class MessageRouter {
  private next: number;
  private readonly single: number;

  constructor(
    private readonly mode: RoutingMode,
    private readonly partitions: number,
    /** With batching on, round-robin switches partition on this boundary (Pulsar's partitionSwitchMs). */
    private readonly switchEveryMs: number | undefined,
    private readonly now: () => number = Date.now,
    random: () => number = Math.random,
  ) {
    this.next = Math.floor(random() * Math.max(1, partitions));
    this.single = this.next;
  }

  /** The partition for a message with this key (undefined: no key). */
  choose(key: string | undefined): number {
    if (this.partitions <= 1) return 0;
    if (key !== undefined) return keyHashPartition(key, this.partitions);
    if (this.mode === 'key-hash') return this.single;
    if (this.switchEveryMs !== undefined) {
      return (Math.floor(this.now() / Math.max(1, this.switchEveryMs)) + this.single) % this.partitions;
    }
    const chosen = this.next % this.partitions;
    this.next = (this.next + 1) % this.partitions;
    return chosen;
  }
}
