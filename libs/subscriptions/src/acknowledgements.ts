import { positionKey, type EntryRange, type Position } from '@ledgerline/cursor-codec';
import type { ConsumerState } from './consumer-state.js';
import type { DeliveryCounts } from './delivery-counts.js';
import type { PendingAcks } from './pending-acks.js';
import type { ReplayQueue } from './replay-queue.js';
import type { DispatchEntry, SubscriptionSource } from './types.js';
import type { CheckedAck } from './validate.js';

/**
 * What acknowledgements do to the entries a subscription delivered. An ack
 * settles them: applied to the source, then gone from pending, replay and
 * delivery counts. A release (a nack's delay over, an ack timeout, the
 * consumer gone, a Failover switch, a redeliver request) puts them back in
 * replay for whoever can take them.
 */
export class Acknowledgements<E extends DispatchEntry> {
  constructor(
    private readonly source: SubscriptionSource<E>,
    private readonly pending: PendingAcks<E>,
    private readonly replay: ReplayQueue,
    private readonly counts: DeliveryCounts,
    /** Something changed that may let dispatch do more. */
    private readonly wake: () => void,
  ) {}

  /** Applies a checked Ack in its order: positions and ranges (one call, all or nothing), batch indexes, cumulative. */
  async apply({ positions, ranges, batchAcks, cumulative }: CheckedAck): Promise<void> {
    if (positions.length > 0 || ranges.length > 0) {
      await this.source.ack({ positions, ranges });
      for (const p of positions) this.settle(p);
      for (const r of ranges) this.settleRange(r);
    }
    for (const b of batchAcks) {
      await this.source.ackBatchIndexes(b.position, b.ackedIndexes, b.batchSize);
      this.afterBatchAck(b.position, b.ackedIndexes.length);
    }
    if (cumulative !== undefined) {
      await this.source.ackCumulative(cumulative);
      this.settleUpTo(cumulative);
    }
    this.wake();
  }

  /** An acknowledged position: no longer pending anywhere nor waiting for redelivery. */
  settle(p: Position): void {
    this.pending.remove(p);
    this.replay.remove(p);
    this.counts.forget(p);
  }

  /**
   * Settles the entries of an acknowledged range that are pending or waiting
   * for replay. A range longer than what is pending and waiting is matched
   * against those instead of walked entry by entry, so its cost is bounded by
   * what the subscription holds, not by how many entries the range names.
   */
  private settleRange(r: EntryRange): void {
    const length = r.lastEntryId - r.firstEntryId + 1;
    if (length > this.pending.size + this.replay.size) {
      for (const p of [...this.pending.positionsWithin(r), ...this.replay.positionsWithin(r)]) this.settle(p);
      return;
    }
    for (let entryId = r.firstEntryId; entryId <= r.lastEntryId; entryId++) {
      this.settle({ ledgerId: r.ledgerId, entryId });
    }
  }

  /** Puts a consumer's unacked entries back for delivery to whoever can take them. */
  release(c: ConsumerState<E>, positions: readonly Position[]): void {
    for (const p of positions) {
      const item = this.pending.remove(p, c);
      if (item === undefined) continue;
      const { position, key, keyHash, unackedMessages } = item;
      this.replay.add({ position, key, keyHash, numMessages: unackedMessages });
    }
    this.wake();
  }

  /** Puts back everything `c` has not acknowledged. */
  releaseAll(c: ConsumerState<E>): void {
    this.release(
      c,
      [...c.pending.values()].map((item) => item.position),
    );
  }

  private settleUpTo(p: Position): void {
    for (const position of this.pending.positionsUpTo(p)) this.settle(position);
    this.replay.removeUpTo(p);
  }

  private afterBatchAck(p: Position, ackedCount: number): void {
    if (this.source.isAcknowledged(p)) {
      this.settle(p);
      return;
    }
    const item = this.pending.holderOf(p)?.pending.get(positionKey(p.ledgerId, p.entryId));
    if (item === undefined) return;
    const remaining = this.source.unackedBatchIndexes?.(p, item.numMessages);
    this.pending.setUnacked(p, Math.max(1, remaining?.length ?? item.unackedMessages - ackedCount));
  }
}
