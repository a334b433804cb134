import {
  createCursorState,
  type CursorState,
  comparePositions,
  positionKey,
  type EntryRange,
  type Position,
} from '@ledgerline/cursor-codec';
import { LedgerlineError, ErrorReason, unexpectedRejection } from '@ledgerline/errors';
import { applyAckDelta, checkAckDelta, exportAcks, type AckDelta, type ExportedCursorState } from './ack-delta.js';
import { ackedRangesPage, buildAckMap, type AckedRangesPage, type CursorSummary } from './ack-map.js';
import { messageBacklog } from './backlog.js';
import type { CursorHost } from './cursor-host.js';
import type { SeekTarget } from '../ledgers/position-lookup.js';
import { ackBatchIndexes, ackEntries, ackUpTo, checkAckPositions, normalize, type AckState } from './cursor-acks.js';
import type { CursorPersistence, SnapshotWrite } from './cursor-persistence.js';
import { checkNumericProperty, checkStringProperty } from './cursor-properties.js';
import { CursorSnapshots } from './cursor-snapshots.js';
import type { ManagedLedgerEntry } from '../entry.js';
import { ManagedLedgerReason } from '../errors.js';
import { canonicalMarkDelete, entriesBetween, lastEntry, positionAfter } from '../ledgers/ledger-views.js';
import { checkPosition } from '../position.js';
import type { WaitOptions } from '../ledgers/read-waiters.js';

export type { SeekTarget } from '../ledgers/position-lookup.js';
export type { ExportedCursorState } from './ack-delta.js';

/** Pages of wholly acknowledged entries a single read skips before it gives up and returns nothing. */
const MAX_SKIPPED_PAGES = 100;

export type CursorStatus = 'open' | 'closed' | 'fenced' | 'deleted';

/** Properties a seek sets together with the move, persisted by the same write. */
export interface PropertyChanges {
  properties?: Readonly<Record<string, bigint | number>>;
  cursorProperties?: Readonly<Record<string, string>>;
}

/**
 * A subscription's position in a managed ledger: what was consumed
 * (mark-delete and the acks above it), where reading goes on, and the
 * persistence of all of it (when: cursor-snapshots.ts; where:
 * cursor-persistence.ts). Built by ManagedLedger.openCursor.
 */
export class ManagedCursor {
  private readonly acks: AckState;
  private readonly properties: Map<string, bigint | number>;
  private readonly cursorProperties: Map<string, string>;
  private readPosition: Position;
  private resetEpoch: number;
  private status: CursorStatus = 'open';
  private readonly snapshots: CursorSnapshots;
  /** The last snapshot write, for stats and the benchmark. */
  lastSnapshot: SnapshotWrite | undefined;

  constructor(
    private readonly host: CursorHost,
    readonly name: string,
    readonly persistence: CursorPersistence,
    state: CursorState,
    resetEpoch: number,
  ) {
    this.acks = { markDelete: state.markDelete, acked: state.acked, batchAcks: state.batchAcks };
    normalize(this.acks, host.views());
    this.properties = state.properties;
    this.cursorProperties = state.cursorProperties;
    this.resetEpoch = resetEpoch;
    this.readPosition = positionAfter(host.views(), this.acks.markDelete);
    this.snapshots = new CursorSnapshots(host.ctx, persistence, {
      name,
      isOpen: () => this.status === 'open',
      checkOpen: () => this.checkOpen(),
      snapshot: () => ({ state: this.snapshotState(), resetEpoch: this.resetEpoch }),
      persisted: (write) => (this.lastSnapshot = write),
      fenced: (error) => {
        this.status = 'fenced';
        this.host.cursorFenced(error);
      },
    });
  }

  get state(): CursorStatus {
    return this.status;
  }

  /** Everything at or before this position is consumed. */
  get markDeletePosition(): Position {
    return this.acks.markDelete;
  }

  /** The next entry readEntries returns (or waits for). */
  get readPositionNow(): Position {
    return this.readPosition;
  }

  get currentResetEpoch(): number {
    return this.resetEpoch;
  }

  /** The cursor ledger the node names; -1 when the state lives in the node. */
  get cursorLedgerId(): number {
    return this.persistence.cursorLedgerId;
  }

  /** Entries from the read position on, skipping those already acknowledged; advances the read position. */
  async readEntries(options: { maxEntries?: number; maxBytes?: number } = {}): Promise<ManagedLedgerEntry[]> {
    this.checkOpen();
    for (let page = 0; page < MAX_SKIPPED_PAGES; page++) {
      const entries = await this.host.readEntries(this.readPosition, options);
      const last = entries[entries.length - 1];
      if (last === undefined) return [];
      this.readPosition = positionAfter(this.host.views(), last.position);
      const unacked = entries.filter((e) => !this.isAcknowledged(e.position));
      if (unacked.length > 0) return unacked;
    }
    return [];
  }

  /** Like readEntries, but waits when nothing is there yet; [] on timeout or abort. */
  async readEntriesOrWait(
    options: { maxEntries?: number; maxBytes?: number } & WaitOptions = {},
  ): Promise<ManagedLedgerEntry[]> {
    for (;;) {
      const entries = await this.readEntries(options);
      if (entries.length > 0) return entries;
      if (!(await this.host.waitForEntries(options))) return [];
    }
  }

  /** Reads again from the first entry not consumed. */
  rewind(): void {
    this.readPosition = positionAfter(this.host.views(), this.acks.markDelete);
  }

  isAcknowledged(p: Position): boolean {
    return comparePositions(p, this.acks.markDelete) <= 0 || this.acks.acked.has(p.ledgerId, p.entryId);
  }

  /** The acknowledged indexes of a partly acknowledged batch entry; undefined when none of it is. */
  ackedBatchIndexes(p: Position): readonly number[] | undefined {
    return this.acks.batchAcks.get(positionKey(p.ledgerId, p.entryId))?.ackedIndexes;
  }

  /**
   * Individual acknowledgements, single positions and inclusive ranges of one
   * ledger, applied as contiguous ranges; mark-delete advances as the gaps
   * below them fill. Checked whole first (checkAckPositions says why here
   * too), so a refused ack changes nothing.
   */
  ack(positions: readonly Position[], ranges: readonly EntryRange[] = []): void {
    this.checkOpen();
    const checked = checkAckPositions(positions, ranges);
    this.changing(() => ackEntries(this.acks, this.host.views(), checked.positions, checked.ranges));
  }

  /**
   * Acknowledges everything up to and including `position`. Checked here
   * (-1 allowed: a mark-delete position) because deduplication's snapshots
   * call it in process, not through the wire.
   */
  ackCumulative(position: Position): void {
    this.checkOpen();
    this.changing(() => ackUpTo(this.acks, this.host.views(), checkPosition(position)));
  }

  /** Acknowledges messages inside a batch entry of `batchSize` messages; checked as ack is, for callers in process. */
  ackBatchIndexes(position: Position, indexes: readonly number[], batchSize: number): void {
    this.checkOpen();
    this.changing(() => ackBatchIndexes(this.acks, this.host.views(), checkPosition(position), indexes, batchSize));
  }

  /**
   * Merges acknowledgements a read-only owner computed (PIP-63) by union:
   * idempotent and commutative. A delta computed before the last reset is
   * ABORTED / CURSOR_RESET_EPOCH_MISMATCH: the reader must re-read the cursor.
   */
  applyAckDelta(delta: AckDelta): void {
    this.checkOpen();
    checkAckDelta(delta, this.resetEpoch);
    const maxRanges = this.host.ctx.config.cursor.maxAckDeltaRanges;
    this.changing(() => applyAckDelta(this.acks, this.host.views(), delta, maxRanges));
  }

  /**
   * The cursor state for GetCursor; without its acked ranges and batch acks
   * (left empty) when `withRanges` is false, which costs nothing per range.
   */
  exportState(withRanges = true): ExportedCursorState {
    const views = this.host.views();
    return {
      ...(withRanges
        ? exportAcks(this.acks, views)
        : { markDelete: canonicalMarkDelete(views, this.acks.markDelete), ackedRanges: [], batchAcks: [] }),
      properties: new Map(this.properties),
      cursorProperties: new Map(this.cursorProperties),
      resetEpoch: this.resetEpoch,
      lastConfirmedEntry: lastEntry(views),
      managedLedgerVersion: this.host.infoVersion(),
    };
  }

  /** The cursor without its ranges, with the ack map of `cells` cells. */
  summary(cells: number): CursorSummary {
    const { ackedRanges: _ranges, batchAcks: _batches, ...state } = this.exportState(false);
    return {
      ...state,
      ackMap: buildAckMap(this.host.views(), state.markDelete, (visit) => this.acks.acked.forEachRange(visit), cells),
      partiallyAckedBatches: this.acks.batchAcks.size,
    };
  }

  /** Up to `limit` acknowledged ranges in position order, from the first that ends at or after `from`. */
  ackedRanges(from: Position | undefined, limit: number): AckedRangesPage {
    return ackedRangesPage(this.acks.acked, from, limit);
  }

  /**
   * Moves the cursor to a position, an offset or a time: everything before
   * the target counts as consumed, everything from it on as not, and the
   * reset epoch goes up. Persisted before it resolves (a versioned overwrite:
   * with expectedResetEpoch, ABORTED when another reset came first), with
   * the property `changes`, which are set only if the move is.
   */
  async seek(target: SeekTarget, expectedResetEpoch?: number, changes: PropertyChanges = {}): Promise<Position> {
    this.checkOpen();
    if (expectedResetEpoch !== undefined && expectedResetEpoch !== this.resetEpoch) {
      throw new LedgerlineError('ABORTED', ErrorReason.BAD_VERSION, `the cursor's reset epoch is ${this.resetEpoch}`);
    }
    this.checkPropertyChanges(changes);
    const next = await this.host.resolveSeekTarget(target);
    const views = this.host.views();
    // Set with the move, so that the one write below holds both: set after it, they waited for the next
    // snapshot (a Kafka commit's exact offset, answered as stored, was not yet).
    this.applyPropertyChanges(changes);
    this.acks.markDelete = canonicalMarkDelete(views, { ledgerId: next.ledgerId, entryId: next.entryId - 1 });
    this.acks.acked.removeUpTo(lastEntry(views) ?? this.acks.markDelete);
    this.acks.batchAcks.clear();
    normalize(this.acks, views);
    this.readPosition = positionAfter(views, this.acks.markDelete);
    this.resetEpoch++;
    await this.snapshots.persistChange(true);
    this.host.cursorMoved();
    return this.readPosition;
  }

  /** Exact messages not yet consumed, from offsets. */
  backlog(): Promise<number> {
    return messageBacklog(this.host.ctx, this.host.views(), this.acks);
  }

  /** Entries not yet consumed (cheap; a batch entry counts once). */
  backlogEntries(): number {
    const views = this.host.views();
    const last = lastEntry(views);
    if (last === undefined) return 0;
    return entriesBetween(views, this.acks.markDelete, last) - this.acks.acked.size();
  }

  getProperties(): Map<string, bigint | number> {
    return new Map(this.properties);
  }

  getCursorProperties(): Map<string, string> {
    return new Map(this.cursorProperties);
  }

  /** Sets (or with undefined removes) a numeric property, stored with the mark-delete position as Pulsar does. */
  setProperty(name: string, value: bigint | number | undefined): void {
    this.checkOpen();
    checkNumericProperty(this.properties, name, value, this.host.ctx.config.cursor.maxProperties);
    this.changing(() => (value === undefined ? this.properties.delete(name) : this.properties.set(name, value)));
  }

  /** Sets (or with undefined removes) a string property of the cursor. */
  setCursorProperty(name: string, value: string | undefined): void {
    this.checkOpen();
    checkStringProperty(this.cursorProperties, name, value, this.host.ctx.config.cursor.maxProperties);
    this.changing(() =>
      value === undefined ? this.cursorProperties.delete(name) : this.cursorProperties.set(name, value),
    );
  }

  stats() {
    return {
      markDelete: this.acks.markDelete,
      readPosition: this.readPosition,
      ackedEntriesAboveMarkDelete: this.acks.acked.size(),
      ackedRanges: this.acks.acked.rangeCount(),
      partlyAckedBatches: this.acks.batchAcks.size,
      backlogEntries: this.backlogEntries(),
      cursorLedgerId: this.cursorLedgerId,
      resetEpoch: this.resetEpoch,
      lastSnapshot: this.lastSnapshot,
    };
  }

  /**
   * Persists now if anything changed since the last snapshot. Changes a
   * cursor can no longer persist fail the flush: ABORTED / CURSOR_FENCED once
   * another owner took the topic, FAILED_PRECONDITION / CURSOR_CLOSED after
   * close or delete.
   */
  async flush(): Promise<void> {
    await this.snapshots.persistNow(false);
  }

  /** Resolves once a snapshot of the state as it is now has landed, without writing one for it (at most an interval). */
  whenPersisted(): Promise<void> {
    return this.snapshots.whenPersisted();
  }

  /** Persists what changed and stops. */
  async close(): Promise<void> {
    if (this.status !== 'open') return;
    this.snapshots.clearTimer();
    try {
      await this.snapshots.persistNow(false);
    } finally {
      if (this.status === 'open') this.status = 'closed';
      this.snapshots.stop();
    }
  }

  /** Stops without persisting (the cursor is being deleted, or the topic is). */
  discard(status: CursorStatus): void {
    this.status = status;
    this.snapshots.stop();
    this.persistence.detach();
    if (status === 'fenced') this.abandonAfterPersist().catch(unexpectedRejection);
  }

  /** Once a snapshot still being written has finished (it may still switch the node), drops the ledgers it left unnamed. */
  private async abandonAfterPersist(): Promise<void> {
    await this.snapshots.inFlight();
    await this.persistence.abandonUnnamed();
  }

  /** The cursor ledgers, for marking them deletable when the cursor or its topic is deleted. */
  ledgersToRetire(): number[] {
    return this.persistence.ledgersToRetire();
  }

  /**
   * Deletes the cursor's node (after discard), by compare-and-set on the
   * version this owner wrote: a node another owner claimed meanwhile is left
   * alone (ABORTED / BAD_VERSION; the caller fences).
   */
  async deleteNode(): Promise<void> {
    // A snapshot still being written moves the node's version: delete against the version it leaves.
    await this.snapshots.inFlight();
    await this.persistence.keeper.delete();
  }

  private checkPropertyChanges(changes: PropertyChanges): void {
    const maxProperties = this.host.ctx.config.cursor.maxProperties;
    for (const [name, value] of Object.entries(changes.properties ?? {})) {
      checkNumericProperty(this.properties, name, value, maxProperties);
    }
    for (const [name, value] of Object.entries(changes.cursorProperties ?? {})) {
      checkStringProperty(this.cursorProperties, name, value, maxProperties);
    }
  }

  private applyPropertyChanges(changes: PropertyChanges): void {
    for (const [name, value] of Object.entries(changes.properties ?? {})) this.properties.set(name, value);
    for (const [name, value] of Object.entries(changes.cursorProperties ?? {})) this.cursorProperties.set(name, value);
  }

  private changing(change: () => unknown): void {
    const before = this.acks.markDelete;
    change();
    if (comparePositions(this.readPosition, this.acks.markDelete) <= 0) {
      this.readPosition = positionAfter(this.host.views(), this.acks.markDelete);
    }
    this.snapshots.changed();
    if (before.ledgerId !== this.acks.markDelete.ledgerId) this.host.cursorMoved();
  }

  private checkOpen(): void {
    if (this.status === 'open') return;
    throw new LedgerlineError(
      this.status === 'fenced' ? 'ABORTED' : 'FAILED_PRECONDITION',
      this.status === 'fenced' ? ManagedLedgerReason.CURSOR_FENCED : ManagedLedgerReason.CURSOR_CLOSED,
      `cursor ${this.name} is ${this.status}`,
    );
  }

  private snapshotState(): CursorState {
    return createCursorState({
      markDelete: this.acks.markDelete,
      acked: this.acks.acked,
      batchAcks: this.acks.batchAcks,
      properties: this.properties,
      cursorProperties: this.cursorProperties,
    });
  }
}
