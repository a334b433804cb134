import { positionKey, type Position } from '@ledgerline/cursor-codec';
import { LRUCache } from 'lru-cache';

/**
 * How many times each position was delivered, kept in memory (as Pulsar's
 * InMemoryRedeliveryTracker) and bounded: past `maxPositions` the position
 * delivered longest ago is forgotten and its count starts again at 0.
 * (An LRU cache: a Map whose first key is deleted on each delivery costs
 * O(deleted slots) per call, as V8 walks them to find the first key.)
 */
export class DeliveryCounts {
  private readonly counts: LRUCache<string, number>;

  constructor(maxPositions: number) {
    // maxSize (each counts 1), not max: max allocates room for all of them up front, in every subscription.
    this.counts = new LRUCache({ maxSize: maxPositions, sizeCalculation: () => 1 });
  }

  get size(): number {
    return this.counts.size;
  }

  get(p: Position): number {
    return this.counts.peek(positionKey(p.ledgerId, p.entryId)) ?? 0;
  }

  /** Records a delivery; returns how many came before it. */
  recordDelivery(p: Position): number {
    const key = positionKey(p.ledgerId, p.entryId);
    const before = this.counts.peek(key) ?? 0;
    // Setting makes it the most recently delivered: the least recently delivered is forgotten first.
    this.counts.set(key, before + 1);
    return before;
  }

  forget(p: Position): void {
    this.counts.delete(positionKey(p.ledgerId, p.entryId));
  }

  clear(): void {
    this.counts.clear();
  }
}
