import { positionKey, type Position } from '@ledgerline/cursor-codec';

/**
 * How many times each position was delivered, kept in memory (as Pulsar's
 * InMemoryRedeliveryTracker) and bounded: past `maxPositions` the position
 * delivered longest ago is forgotten and its count starts again at 0.
 */
export class DeliveryCounts {
  private readonly counts = new Map<string, number>();

  constructor(private readonly maxPositions: number) {}

  get size(): number {
    return this.counts.size;
  }

  get(p: Position): number {
    return this.counts.get(positionKey(p.ledgerId, p.entryId)) ?? 0;
  }

  /** Records a delivery; returns how many came before it. */
  recordDelivery(p: Position): number {
    const key = positionKey(p.ledgerId, p.entryId);
    const before = this.counts.get(key) ?? 0;
    // Re-inserting keeps the map in order of last delivery, so the first key is the one to forget.
    this.counts.delete(key);
    this.counts.set(key, before + 1);
    if (this.counts.size > this.maxPositions) {
      const oldest = this.counts.keys().next();
      if (oldest.done !== true) this.counts.delete(oldest.value);
    }
    return before;
  }

  forget(p: Position): void {
    this.counts.delete(positionKey(p.ledgerId, p.entryId));
  }

  clear(): void {
    this.counts.clear();
  }
}
