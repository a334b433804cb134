import { comparePositions, positionKey, type EntryRange, type Position } from '@ledgerline/cursor-codec';

/** A position waiting to be delivered again, with what dispatch needs without reading it. */
export interface ReplayItem {
  readonly position: Position;
  /** The entry's ordering key, kept to hash it again when the subscription type changes. */
  readonly key: string | undefined;
  /** The sticky key hash (Key_Shared), -1 for other types. */
  readonly keyHash: number;
  /** Messages it holds for the consumer (unacked ones of a batch). */
  readonly numMessages: number;
}

/**
 * Positions to deliver again (Pulsar's messagesToRedeliver): released by a
 * consumer (nack, ack timeout, leave, failover switch) or held back because
 * no consumer could take them yet. Taken in position order.
 */
export class ReplayQueue {
  private readonly items = new Map<string, ReplayItem>();
  private readonly byHash = new Map<number, Set<string>>();
  private sortedCache: ReplayItem[] | undefined;

  get size(): number {
    return this.items.size;
  }

  add(item: ReplayItem): void {
    const key = positionKey(item.position.ledgerId, item.position.entryId);
    if (this.items.has(key)) return;
    this.items.set(key, item);
    this.sortedCache = undefined;
    if (item.keyHash < 0) return;
    let keys = this.byHash.get(item.keyHash);
    if (keys === undefined) this.byHash.set(item.keyHash, (keys = new Set()));
    keys.add(key);
  }

  has(p: Position): boolean {
    return this.items.has(positionKey(p.ledgerId, p.entryId));
  }

  remove(p: Position): boolean {
    const key = positionKey(p.ledgerId, p.entryId);
    const item = this.items.get(key);
    if (item === undefined) return false;
    this.items.delete(key);
    this.sortedCache = undefined;
    const keys = this.byHash.get(item.keyHash);
    keys?.delete(key);
    if (keys?.size === 0) this.byHash.delete(item.keyHash);
    return true;
  }

  hasHash(keyHash: number): boolean {
    return this.byHash.has(keyHash);
  }

  /** The first position of this hash waiting, if any. */
  lowestForHash(keyHash: number): Position | undefined {
    let lowest: Position | undefined;
    for (const key of this.byHash.get(keyHash) ?? []) {
      const p = (this.items.get(key) as ReplayItem).position;
      if (lowest === undefined || comparePositions(p, lowest) < 0) lowest = p;
    }
    return lowest;
  }

  /** Every item in position order (cached until the next change). */
  sorted(): readonly ReplayItem[] {
    this.sortedCache ??= [...this.items.values()].sort((a, b) => comparePositions(a.position, b.position));
    return this.sortedCache;
  }

  /** Every waiting position inside an inclusive range of one ledger. */
  positionsWithin(r: EntryRange): Position[] {
    const out: Position[] = [];
    for (const { position } of this.items.values()) {
      if (position.ledgerId === r.ledgerId && position.entryId >= r.firstEntryId && position.entryId <= r.lastEntryId)
        out.push(position);
    }
    return out;
  }

  /** Drops every position at or before `p` (a cumulative ack). */
  removeUpTo(p: Position): void {
    for (const item of this.sorted()) {
      if (comparePositions(item.position, p) > 0) break;
      this.remove(item.position);
    }
  }

  /** Hashes every item again (the subscription changed type while positions waited). */
  rehash(hashOf: (key: string | undefined) => number): void {
    const items = [...this.items.values()];
    this.clear();
    for (const item of items) this.add({ ...item, keyHash: hashOf(item.key) });
  }

  clear(): void {
    this.items.clear();
    this.byHash.clear();
    this.sortedCache = undefined;
  }
}
