import { comparePositions, positionKey, type EntryRange, type Position } from '@ledgerline/cursor-codec';
import type { ConsumerState, PendingItem } from './consumer-state.js';
import type { DispatchEntry } from './types.js';

/**
 * Entries delivered and not yet acknowledged, across a subscription's
 * consumers: who holds each position, who holds each Key_Shared hash, and the
 * unacked counts with the pause at their bounds (blocked at the bound,
 * released at half of it, as Pulsar does).
 */
export class PendingAcks<E extends DispatchEntry> {
  private readonly holders = new Map<string, ConsumerState<E>>();
  /** Key_Shared: the consumer holding unacked entries of each hash, and how many; only it may get more of that hash. */
  private readonly hashHolders = new Map<number, { consumer: ConsumerState<E>; entries: number }>();
  private unacked = 0;
  private isBlocked = false;

  constructor(
    private readonly maxUnackedPerConsumer: number,
    private readonly maxUnackedPerSubscription: number,
  ) {}

  get unackedMessages(): number {
    return this.unacked;
  }

  /** The subscription's bound was reached: nothing is delivered until acks bring it to half. */
  get blocked(): boolean {
    return this.isBlocked;
  }

  holderOf(p: Position): ConsumerState<E> | undefined {
    return this.holders.get(positionKey(p.ledgerId, p.entryId));
  }

  holderOfHash(keyHash: number): ConsumerState<E> | undefined {
    return this.hashHolders.get(keyHash)?.consumer;
  }

  add(c: ConsumerState<E>, item: PendingItem): void {
    const key = positionKey(item.position.ledgerId, item.position.entryId);
    c.pending.set(key, item);
    this.holders.set(key, c);
    this.changeUnacked(c, item.unackedMessages);
    if (item.keyHash < 0) return;
    const holder = this.hashHolders.get(item.keyHash);
    if (holder === undefined) {
      this.hashHolders.set(item.keyHash, { consumer: c, entries: 1 });
      return;
    }
    // Dispatch only picks the holder of a hash; anything else would break per-key order.
    if (holder.consumer !== c) throw new Error(`invariant: hash ${item.keyHash} is held by ${holder.consumer.name}`);
    holder.entries++;
  }

  /** Removes `p` from `c` (any holder when `c` is undefined); returns what was pending. */
  remove(p: Position, c: ConsumerState<E> | undefined = undefined): PendingItem | undefined {
    const key = positionKey(p.ledgerId, p.entryId);
    const holder = this.holders.get(key);
    if (holder === undefined || (c !== undefined && holder !== c)) return undefined;
    const item = holder.pending.get(key) as PendingItem;
    holder.pending.delete(key);
    this.holders.delete(key);
    this.changeUnacked(holder, -item.unackedMessages);
    if (item.keyHash >= 0) {
      const hashHolder = this.hashHolders.get(item.keyHash);
      if (hashHolder !== undefined && --hashHolder.entries === 0) this.hashHolders.delete(item.keyHash);
    }
    return item;
  }

  /** Entries pending across every consumer. */
  get size(): number {
    return this.holders.size;
  }

  /** Every pending position inside an inclusive range of one ledger. */
  positionsWithin(r: EntryRange): Position[] {
    const out: Position[] = [];
    for (const c of new Set(this.holders.values())) {
      for (const { position } of c.pending.values()) {
        if (inRange(position, r)) out.push(position);
      }
    }
    return out;
  }

  /** Every pending position at or before `p` (a cumulative ack). */
  positionsUpTo(p: Position): Position[] {
    const out: Position[] = [];
    for (const c of new Set(this.holders.values())) {
      for (const item of c.pending.values()) if (comparePositions(item.position, p) <= 0) out.push(item.position);
    }
    return out;
  }

  /** A batch-index ack left `unacked` messages of a pending entry. */
  setUnacked(p: Position, unacked: number): void {
    const key = positionKey(p.ledgerId, p.entryId);
    const holder = this.holders.get(key);
    const item = holder?.pending.get(key);
    if (holder === undefined || item === undefined) return;
    this.changeUnacked(holder, unacked - item.unackedMessages);
    item.unackedMessages = unacked;
  }

  private changeUnacked(c: ConsumerState<E>, delta: number): void {
    c.unackedMessages += delta;
    this.unacked += delta;
    const perConsumer = this.maxUnackedPerConsumer;
    const perSubscription = this.maxUnackedPerSubscription;
    if (!c.blocked && c.unackedMessages >= perConsumer) c.blocked = true;
    else if (c.blocked && c.unackedMessages <= perConsumer / 2) c.blocked = false;
    if (!this.isBlocked && this.unacked >= perSubscription) this.isBlocked = true;
    else if (this.isBlocked && this.unacked <= perSubscription / 2) this.isBlocked = false;
  }
}

function inRange(p: Position, r: EntryRange): boolean {
  return p.ledgerId === r.ledgerId && p.entryId >= r.firstEntryId && p.entryId <= r.lastEntryId;
}
