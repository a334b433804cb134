import { AckSet, comparePositions, positionKey, type EntryRange, type Position } from '@ledgerline/cursor-codec';
import { applyAckDelta, exportAcks, type AckDelta, type ExportedAcks } from '../cursors/ack-delta.js';
import {
  ackBatchIndexes,
  ackEntries,
  ackUpTo,
  emptyAckState,
  normalize,
  type AckState,
} from '../cursors/cursor-acks.js';
import { entriesBetween, lastEntry, type LedgerView } from '../ledgers/ledger-views.js';

/** Ranges and batches one delta carries at most: the writer refuses more (its maxAckDeltaRanges). */
export const DEFAULT_MAX_DELTA_RANGES = 10_000;

/**
 * A cursor's acknowledgements as a read-only owner holds them (PIP-63): the
 * writer owner keeps the cursor; this is the local copy, applied at once so
 * dispatch never redelivers what a consumer here acknowledged, plus what was
 * acknowledged here and not yet sent to the writer.
 *
 * Deltas carry only what changed (new ranges, the mark-delete, touched batch
 * entries), and the writer merges them by union, so acks made elsewhere (on
 * the writer, on another read-only owner) are never undone; `merge` folds the
 * writer's state back in the same way.
 */
export class ReadOnlyCursorState {
  private state: AckState;
  private unsentRanges = new AckSet();
  private unsentBatches = new Set<string>();
  private unsentMarkDelete = false;
  private epoch: number;

  constructor(
    private readonly views: () => readonly LedgerView[],
    acks: ExportedAcks,
    resetEpoch: number,
    private readonly maxDeltaRanges = DEFAULT_MAX_DELTA_RANGES,
  ) {
    this.state = emptyAckState(acks.markDelete);
    this.epoch = resetEpoch;
    this.merge(acks);
  }

  get markDelete(): Position {
    return this.state.markDelete;
  }

  get resetEpoch(): number {
    return this.epoch;
  }

  /** True when nothing acknowledged here is waiting to be sent. */
  get isSynced(): boolean {
    return this.unsentRanges.isEmpty() && this.unsentBatches.size === 0 && !this.unsentMarkDelete;
  }

  isAcknowledged(p: Position): boolean {
    return comparePositions(p, this.state.markDelete) <= 0 || this.state.acked.has(p.ledgerId, p.entryId);
  }

  ackedBatchIndexes(p: Position): readonly number[] | undefined {
    return this.state.batchAcks.get(positionKey(p.ledgerId, p.entryId))?.ackedIndexes;
  }

  /** Individual acks, single positions and ranges; a range goes to the writer as the one range it is. */
  ack(positions: readonly Position[], ranges: readonly EntryRange[] = []): void {
    const before = this.state.markDelete;
    ackEntries(this.state, this.views(), positions, ranges);
    for (const p of positions) {
      if (comparePositions(p, before) > 0) this.unsentRanges.add(p.ledgerId, p.entryId);
    }
    // What is at or below mark-delete travels as the mark-delete itself (takeDelta drops it there).
    for (const r of ranges) this.unsentRanges.addRange(r.ledgerId, r.firstEntryId, r.lastEntryId);
    this.markDeleteMoved(before);
  }

  ackCumulative(p: Position): void {
    const before = this.state.markDelete;
    ackUpTo(this.state, this.views(), p);
    this.markDeleteMoved(before);
  }

  ackBatchIndexes(p: Position, indexes: readonly number[], batchSize: number): void {
    const before = this.state.markDelete;
    ackBatchIndexes(this.state, this.views(), p, indexes, batchSize);
    if (this.state.acked.has(p.ledgerId, p.entryId)) this.unsentRanges.add(p.ledgerId, p.entryId);
    else this.unsentBatches.add(positionKey(p.ledgerId, p.entryId));
    this.markDeleteMoved(before);
  }

  /** Folds the writer's state in by union (acks made on the writer or another read-only owner). */
  merge(acks: ExportedAcks): void {
    applyAckDelta(this.state, this.views(), { ...acks, resetEpoch: this.epoch }, Number.MAX_SAFE_INTEGER);
  }

  /** A reset (seek) on the writer: its state replaces this one, and unsent acks of the old epoch are dropped. */
  reset(acks: ExportedAcks, resetEpoch: number): void {
    this.state = emptyAckState(acks.markDelete);
    this.epoch = resetEpoch;
    this.unsentRanges = new AckSet();
    this.unsentBatches.clear();
    this.unsentMarkDelete = false;
    this.merge(acks);
  }

  /**
   * What to send to the writer, or undefined when nothing changed; it counts
   * as sent until `unsent(delta)` hands it back after a failed update. At
   * most `maxDeltaRanges` ranges and batches; the rest waits for the next one.
   */
  takeDelta(): AckDelta | undefined {
    if (this.isSynced) return undefined;
    const views = this.views();
    // Entries at or below mark-delete travel as the mark-delete itself.
    this.unsentRanges.removeUpTo(this.state.markDelete);
    const { kept } = this.unsentRanges.keepFirstRanges(this.maxDeltaRanges);
    const ackedRanges: AckDelta['ackedRanges'] = [];
    let lastSent: Position | undefined;
    kept.forEachRange((ledgerId, firstEntryId, lastEntryId) => {
      ackedRanges.push({ ledgerId, firstEntryId, lastEntryId });
      lastSent = { ledgerId, entryId: lastEntryId };
    });
    const exported = exportAcks(this.state, views);
    const room = Math.max(0, this.maxDeltaRanges - ackedRanges.length);
    const batchAcks = exported.batchAcks
      .filter((b) => this.unsentBatches.has(positionKey(b.position.ledgerId, b.position.entryId)))
      .slice(0, room);
    const delta: AckDelta = { ackedRanges, markDelete: exported.markDelete, batchAcks, resetEpoch: this.epoch };
    // The ranges sent are the first ones: what is left is everything after the last of them.
    if (lastSent === undefined) this.unsentRanges = new AckSet();
    else this.unsentRanges.removeUpTo(lastSent);
    for (const b of batchAcks) this.unsentBatches.delete(positionKey(b.position.ledgerId, b.position.entryId));
    this.unsentMarkDelete = false;
    return delta;
  }

  /** A delta the writer did not take (the update failed): it is sent again with the next one. */
  unsent(delta: AckDelta): void {
    if (delta.resetEpoch !== this.epoch) return;
    for (const r of delta.ackedRanges ?? []) this.unsentRanges.addRange(r.ledgerId, r.firstEntryId, r.lastEntryId);
    for (const b of delta.batchAcks ?? []) this.unsentBatches.add(positionKey(b.position.ledgerId, b.position.entryId));
    this.unsentMarkDelete = true;
  }

  /** Entries not yet acknowledged, up to the last confirmed entry. */
  backlogEntries(): number {
    const views = this.views();
    const last = lastEntry(views);
    if (last === undefined) return 0;
    return Math.max(0, entriesBetween(views, this.state.markDelete, last) - this.state.acked.size());
  }

  private markDeleteMoved(before: Position): void {
    normalize(this.state, this.views());
    if (comparePositions(this.state.markDelete, before) !== 0) this.unsentMarkDelete = true;
  }
}
