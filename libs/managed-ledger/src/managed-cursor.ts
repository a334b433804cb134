import { createCursorState, type CursorState } from '@ledgerline/cursor-codec';
import { invalidArgument, LedgerlineError, unexpectedRejection } from '@ledgerline/errors';
import { applyAckDelta, exportAcks, type AckDelta, type ExportedAcks } from './ack-delta.js';
import { messageBacklog } from './backlog.js';
import type { LedgerContext } from './context.js';
import { ackBatchIndexes, ackEntries, ackUpTo, normalize, type AckState } from './cursor-acks.js';
import type { CursorPersistence, SnapshotWrite } from './cursor-persistence.js';
import type { ManagedLedgerEntry } from './entry.js';
import { isBadVersion, ManagedLedgerReason } from './errors.js';
import { canonicalMarkDelete, entriesBetween, lastEntry, positionAfter, type LedgerView } from './ledger-views.js';
import type { DeletableLedgerRecord } from './managed-ledger-info.js';
import { checkPosition, comparePositions, type Position } from './position.js';
import type { WaitOptions } from './read-waiters.js';

/** Pages of wholly acknowledged entries a single read skips before it gives up and returns nothing. */
const MAX_SKIPPED_PAGES = 100;

/** What a cursor needs from its managed ledger. */
export interface CursorHost {
  readonly ctx: LedgerContext;
  views(): LedgerView[];
  readEntries(from: Position, options: { maxEntries?: number; maxBytes?: number }): Promise<ManagedLedgerEntry[]>;
  waitForEntries(options: WaitOptions): Promise<boolean>;
  resolveSeekTarget(target: SeekTarget): Promise<Position>;
  markDeletable(records: DeletableLedgerRecord[]): Promise<void>;
  /** The slowest cursor may have moved: trimming may have work. */
  cursorMoved(): void;
  /** A cursor node changed under us: another owner. */
  cursorFenced(err: LedgerlineError): void;
  /** The managed ledger's metadata version, for GetCursor's waitSync. */
  infoVersion(): number;
}

/** Where a seek goes: the entry to read next. */
export type SeekTarget = { position: Position } | { offset: number } | { timestampMs: number };

/** The whole cursor as GetCursor returns it. */
export interface ExportedCursorState extends ExportedAcks {
  properties: Map<string, bigint | number>;
  cursorProperties: Map<string, string>;
  resetEpoch: number;
  lastConfirmedEntry: Position | undefined;
  managedLedgerVersion: number;
}

export type CursorStatus = 'open' | 'closed' | 'fenced' | 'deleted';

/**
 * A subscription's position in a managed ledger: what was consumed
 * (mark-delete and the acks above it), where reading goes on, and the
 * persistence of all of it (see cursor-persistence.ts). Built by
 * ManagedLedger.openCursor.
 */
export class ManagedCursor {
  private readonly acks: AckState;
  private readonly properties: Map<string, bigint | number>;
  private readonly cursorProperties: Map<string, string>;
  private readPosition: Position;
  private resetEpoch: number;
  private status: CursorStatus = 'open';
  private dirty = false;
  private persisting: Promise<void> | undefined;
  private persistTimer: NodeJS.Timeout | undefined;
  private lastPersistAtMs = 0;
  private persistFailures = 0;
  /** The last snapshot write, for stats and the benchmark. */
  lastSnapshot: SnapshotWrite | undefined;

  constructor(
    private readonly host: CursorHost,
    readonly name: string,
    private readonly persistence: CursorPersistence,
    state: CursorState,
    resetEpoch: number,
  ) {
    this.acks = { markDelete: state.markDelete, acked: state.acked, batchAcks: state.batchAcks };
    normalize(this.acks, host.views());
    this.properties = state.properties;
    this.cursorProperties = state.cursorProperties;
    this.resetEpoch = resetEpoch;
    this.readPosition = positionAfter(host.views(), this.acks.markDelete);
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

  /** Individual acknowledgements; mark-delete advances as the gaps below them fill. */
  ack(positions: readonly Position[]): void {
    this.checkOpen();
    if (!Array.isArray(positions) || positions.length > this.host.ctx.config.cursor.maxAckPositionsPerCall) {
      throw invalidArgument(
        ManagedLedgerReason.invalidAckDelta,
        `ack takes an array of at most ${this.host.ctx.config.cursor.maxAckPositionsPerCall} positions (maxAckPositionsPerCall)`,
      );
    }
    this.changing(() =>
      ackEntries(
        this.acks,
        this.host.views(),
        positions.map((p) => checkPosition(p)),
      ),
    );
  }

  /** Acknowledges everything up to and including `position`. */
  ackCumulative(position: Position): void {
    this.checkOpen();
    this.changing(() => ackUpTo(this.acks, this.host.views(), checkPosition(position)));
  }

  /** Acknowledges messages inside a batch entry of `batchSize` messages. */
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
    if (typeof delta !== 'object' || delta === null || !Number.isSafeInteger(delta.resetEpoch)) {
      throw invalidArgument(ManagedLedgerReason.invalidAckDelta, 'an ack delta needs a resetEpoch and optional ranges');
    }
    if (!Array.isArray(delta.ackedRanges ?? []) || !Array.isArray(delta.batchAcks ?? [])) {
      throw invalidArgument(ManagedLedgerReason.invalidAckDelta, 'ackedRanges and batchAcks must be arrays');
    }
    if (delta.resetEpoch !== this.resetEpoch) {
      throw new LedgerlineError(
        'ABORTED',
        ManagedLedgerReason.resetEpochMismatch,
        `the delta was computed against reset epoch ${String(delta?.resetEpoch)}, the cursor is at ${this.resetEpoch}`,
      );
    }
    const maxRanges = this.host.ctx.config.cursor.maxAckDeltaRanges;
    this.changing(() => applyAckDelta(this.acks, this.host.views(), delta, maxRanges));
  }

  /** The cursor state for GetCursor. */
  exportState(): ExportedCursorState {
    const views = this.host.views();
    return {
      ...exportAcks(this.acks, views),
      properties: new Map(this.properties),
      cursorProperties: new Map(this.cursorProperties),
      resetEpoch: this.resetEpoch,
      lastConfirmedEntry: lastEntry(views),
      managedLedgerVersion: this.host.infoVersion(),
    };
  }

  /**
   * Moves the cursor to a position, an offset or a time: everything before
   * the target counts as consumed, everything from it on as not, and the
   * reset epoch goes up. Persisted before it resolves (a versioned overwrite:
   * with expectedResetEpoch, ABORTED when another reset came first).
   */
  async seek(target: SeekTarget, expectedResetEpoch?: number): Promise<Position> {
    this.checkOpen();
    if (expectedResetEpoch !== undefined && expectedResetEpoch !== this.resetEpoch) {
      throw new LedgerlineError(
        'ABORTED',
        ManagedLedgerReason.badVersion,
        `the cursor's reset epoch is ${this.resetEpoch}`,
      );
    }
    const next = await this.host.resolveSeekTarget(target);
    const views = this.host.views();
    this.acks.markDelete = canonicalMarkDelete(views, { ledgerId: next.ledgerId, entryId: next.entryId - 1 });
    this.acks.acked.removeUpTo(lastEntry(views) ?? this.acks.markDelete);
    this.acks.batchAcks.clear();
    normalize(this.acks, views);
    this.readPosition = positionAfter(views, this.acks.markDelete);
    this.resetEpoch++;
    this.dirty = true;
    await this.persistNow(true);
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
    this.checkPropertyName(name, this.properties);
    if (value !== undefined && !(typeof value === 'bigint' || Number.isSafeInteger(value))) {
      throw invalidArgument(ManagedLedgerReason.invalidProperty, `property ${name} must be an integer`);
    }
    this.changing(() => (value === undefined ? this.properties.delete(name) : this.properties.set(name, value)));
  }

  /** Sets (or with undefined removes) a string property of the cursor. */
  setCursorProperty(name: string, value: string | undefined): void {
    this.checkOpen();
    this.checkPropertyName(name, this.cursorProperties);
    if (value !== undefined && typeof value !== 'string') {
      throw invalidArgument(ManagedLedgerReason.invalidProperty, `cursor property ${name} must be a string`);
    }
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
    await this.persistNow(false);
  }

  /** Persists what changed and stops. */
  async close(): Promise<void> {
    if (this.status !== 'open') return;
    this.clearTimer();
    try {
      await this.persistNow(false);
    } finally {
      if (this.status === 'open') this.status = 'closed';
    }
  }

  /** Stops without persisting (the cursor is being deleted, or the topic is). */
  discard(status: CursorStatus): void {
    this.clearTimer();
    this.status = status;
    this.persistence.detach();
    if (status === 'fenced') this.abandonAfterPersist().catch(unexpectedRejection);
  }

  /** Once a snapshot still being written has finished (it may still switch the node), drops the ledgers it left unnamed. */
  private async abandonAfterPersist(): Promise<void> {
    await this.persisting?.catch(() => undefined);
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
    await this.persisting?.catch(() => undefined);
    await this.persistence.keeper.delete();
  }

  private changing(change: () => unknown): void {
    const before = this.acks.markDelete;
    change();
    if (comparePositions(this.readPosition, this.acks.markDelete) <= 0) {
      this.readPosition = positionAfter(this.host.views(), this.acks.markDelete);
    }
    this.dirty = true;
    this.schedulePersist();
    if (before.ledgerId !== this.acks.markDelete.ledgerId) this.host.cursorMoved();
  }

  private checkOpen(): void {
    if (this.status === 'open') return;
    throw new LedgerlineError(
      this.status === 'fenced' ? 'ABORTED' : 'FAILED_PRECONDITION',
      this.status === 'fenced' ? ManagedLedgerReason.cursorFenced : ManagedLedgerReason.cursorClosed,
      `cursor ${this.name} is ${this.status}`,
    );
  }

  private checkPropertyName(name: string, map: Map<string, unknown>): void {
    if (typeof name !== 'string' || name.length === 0 || name.length > 256) {
      throw invalidArgument(ManagedLedgerReason.invalidProperty, 'a property name must be 1 to 256 characters');
    }
    if (!map.has(name) && map.size >= this.host.ctx.config.cursor.maxProperties) {
      throw new LedgerlineError(
        'RESOURCE_EXHAUSTED',
        ManagedLedgerReason.invalidProperty,
        'too many cursor properties (maxProperties)',
      );
    }
  }

  /** Persists at most once per snapshotIntervalMs (rate limit), real time. */
  private schedulePersist(): void {
    if (this.persistTimer !== undefined || this.persisting !== undefined || this.status !== 'open') return;
    const interval = this.host.ctx.config.cursor.snapshotIntervalMs * 2 ** Math.min(this.persistFailures, 6);
    const waitMs = Math.max(0, this.lastPersistAtMs + interval - Date.now());
    this.persistTimer = setTimeout(() => {
      this.persistTimer = undefined;
      void this.persistNow(false).catch(() => undefined);
    }, waitMs);
    this.persistTimer.unref();
  }

  private clearTimer(): void {
    if (this.persistTimer !== undefined) clearTimeout(this.persistTimer);
    this.persistTimer = undefined;
  }

  private async persistNow(writeNode: boolean): Promise<void> {
    while (this.persisting !== undefined) await this.persisting.catch(() => undefined);
    if (!this.dirty) return;
    // Changes a fenced, deleted or closed cursor still holds can no longer be persisted: saying so beats a silent success.
    this.checkOpen();
    // This write covers what a pending timer would write; the next change waits a full interval from now.
    this.clearTimer();
    this.dirty = false;
    this.persisting = this.writeSnapshot(writeNode);
    try {
      await this.persisting;
    } finally {
      this.persisting = undefined;
      if (this.dirty && this.status === 'open') this.schedulePersist();
    }
  }

  private async writeSnapshot(writeNode: boolean): Promise<void> {
    const state = createCursorState({
      markDelete: this.acks.markDelete,
      acked: this.acks.acked,
      batchAcks: this.acks.batchAcks,
      properties: this.properties,
      cursorProperties: this.cursorProperties,
    });
    this.lastPersistAtMs = Date.now();
    try {
      this.lastSnapshot = await this.persistence.persist(
        state,
        { resetEpoch: this.resetEpoch, lastActiveMs: this.host.ctx.now() },
        writeNode,
      );
      this.persistFailures = 0;
      this.host.ctx.metrics.cursorSnapshots.inc({ topic: this.host.ctx.topic });
    } catch (err) {
      this.onPersistFailure(err);
      throw err;
    }
  }

  private onPersistFailure(err: unknown): void {
    const error = LedgerlineError.from(err);
    if (isBadVersion(error) || error.reason === ManagedLedgerReason.ledgerFenced) {
      this.status = 'fenced';
      this.host.cursorFenced(error);
      return;
    }
    this.dirty = true;
    this.persistFailures++;
    this.host.ctx.logger.warn(
      { topic: this.host.ctx.topic, cursor: this.name, error: error.toString() },
      'cursor snapshot failed; retrying',
    );
  }
}
