import { LRUCache } from 'lru-cache';
import { comparePositions, positionKey } from './message.js';

/**
 * Acknowledgements the owner has confirmed that are still remembered, to drop
 * a redelivery that crossed its receipt (one already on the wire, or from an
 * owner whose view of the cursor lags); the oldest are forgotten first.
 * Acknowledgements not yet confirmed are never forgotten: see AckMemory.
 */
export const MAX_REMEMBERED_ACKS = 100_000;

/** An entry position. */
export interface Position {
  readonly ledgerId: bigint;
  readonly entryId: bigint;
}

/** The key a message (an entry's batch index, -1 for a whole entry) is remembered under. */
export function messageKey(position: Position, batchIndex: number): string {
  return `${positionKey(position.ledgerId, position.entryId)}:${batchIndex}`;
}

/**
 * What one partition consumer acknowledged, so that a redelivery of it is
 * never handed to the application again. A message is remembered from the
 * moment it is acked. Until the owner confirms the command that carries it,
 * it sits with the unconfirmed acks, which are only dropped by a seek: an
 * ack may already have resolved for the application while the owner can
 * still lose it (it died before persisting), and then the owner redelivers
 * the message after the reconnect. Once confirmed, it moves to the
 * remembered acks, bounded by MAX_REMEMBERED_ACKS.
 */
export class AckMemory {
  /** Unconfirmed acks: how many commands in flight (or grouped) carry each message. */
  private readonly unconfirmed = new Map<string, number>();
  /**
   * Confirmed acks, the oldest forgotten first. An LRU cache rather than a Map
   * whose first key is deleted: V8 walks a Map's deleted slots to find its
   * first key, which cost 30–78 µs per ack once 100,000 were remembered.
   * Bounded by maxSize (each counts 1), not max, which would allocate
   * room for all of them in every consumer up front.
   */
  private readonly confirmed = new LRUCache<string, true>({ maxSize: MAX_REMEMBERED_ACKS, sizeCalculation: () => 1 });
  private cumulativeUpTo: Position | undefined;
  /** Indexes acknowledged so far of each batch entry not yet wholly acknowledged. */
  private readonly batchIndexes = new Map<string, Set<number>>();

  /** Messages acked and not yet confirmed by the owner. */
  get unconfirmedCount(): number {
    return this.unconfirmed.size;
  }

  /** Remembers an ack until `confirm` is called with its key (as many times as it was remembered). */
  remember(key: string): void {
    this.unconfirmed.set(key, (this.unconfirmed.get(key) ?? 0) + 1);
  }

  /** Everything up to `position` is acknowledged (a cumulative ack). */
  rememberCumulative(position: Position): void {
    if (this.cumulativeUpTo === undefined || comparePositions(position, this.cumulativeUpTo) > 0) {
      this.cumulativeUpTo = position;
    }
  }

  /** The owner confirmed a command carrying these keys. */
  confirm(keys: readonly string[]): void {
    for (const key of keys) {
      const count = this.unconfirmed.get(key);
      if (count === undefined) continue;
      if (count > 1) {
        this.unconfirmed.set(key, count - 1);
        continue;
      }
      this.unconfirmed.delete(key);
      this.confirmed.set(key, true);
    }
  }

  /** Whether this message was acknowledged here (a redelivery of it is dropped). */
  isAcked(position: Position, batchIndex: number): boolean {
    if (this.cumulativeUpTo !== undefined && comparePositions(position, this.cumulativeUpTo) <= 0) return true;
    const key = messageKey(position, batchIndex);
    return this.unconfirmed.has(key) || this.confirmed.has(key);
  }

  /**
   * Adds `batchIndex` to the indexes acknowledged of a batch entry; returns
   * all of them (the set itself, which later acks add to), or undefined once
   * the whole entry is acknowledged.
   */
  ackBatchIndex(position: Position, batchIndex: number, batchSize: number): ReadonlySet<number> | undefined {
    const key = positionKey(position.ledgerId, position.entryId);
    const indexes = this.batchIndexes.get(key) ?? new Set<number>();
    indexes.add(batchIndex);
    if (indexes.size >= batchSize) {
      this.batchIndexes.delete(key);
      return undefined;
    }
    this.batchIndexes.set(key, indexes);
    return indexes;
  }

  /** A batch entry delivered with only `present` of its indexes: the owner has the others acknowledged. */
  batchDelivered(position: Position, batchSize: number, present: ReadonlySet<number>): void {
    const key = positionKey(position.ledgerId, position.entryId);
    const indexes = this.batchIndexes.get(key) ?? new Set<number>();
    for (let index = 0; index < batchSize; index++) if (!present.has(index)) indexes.add(index);
    if (indexes.size > 0) this.batchIndexes.set(key, indexes);
  }

  /** After a seek: the application asked to see acknowledged messages again. */
  forget(): void {
    this.unconfirmed.clear();
    this.confirmed.clear();
    this.batchIndexes.clear();
    this.cumulativeUpTo = undefined;
  }
}
