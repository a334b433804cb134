import { type Position } from '@ledgerline/cursor-codec';
import type { TopicName } from '@ledgerline/naming';
import type { MessagePosition } from '@ledgerline/offset-index';
import { LedgerlineError, unexpectedRejection } from '@ledgerline/errors';
import { AppendPipeline } from './append/append-pipeline.js';
import type { ManagedLedgerConfig } from './config.js';
import type { LedgerContext, ManagedLedgerDependencies } from './context.js';
import { CursorRegistry, type OpenCursorOptions } from './cursors/cursor-registry.js';
import { discardUnrecordedLedgers, markDeletable, recordDeletion } from './ledgers/deletable-ledgers.js';
import type { AppendOptions, AppendResult, ManagedLedgerEntry } from './entry.js';
import { closedError, deletingError, managedLedgerFencedError } from './errors.js';
import { ledgerAppendHost } from './append/ledger-append-host.js';
import { readEntries, readLimits, type ReadOptions } from './ledgers/ledger-reads.js';
import { sealAndRecordOnClose, sealAndRecordTerminated } from './ledgers/ledger-rollover.js';
import { LedgerMaintenance } from './ledgers/ledger-maintenance.js';
import { LedgerTrimmer } from './ledgers/ledger-trimmer.js';
import { deleteRecordsBefore } from './ledgers/delete-records.js';
import { endPosition, lastEntry, ledgerViews, StoredBytes, type LedgerView } from './ledgers/ledger-views.js';
import type { CursorHost } from './cursors/cursor-host.js';
import type { ManagedCursor } from './cursors/managed-cursor.js';
import {
  cloneInfo,
  storedLowWatermark,
  type DeletableLedgerRecord,
  type ManagedLedgerInfoModel,
} from '@ledgerline/ledger-info';
import { openOwnerContext, type ManagedLedgerOpenOptions } from './managed-ledger-open.js';
import { handOverStateOf, type HandOverState } from './hand-over-state.js';
import { ManagedLedgerLifecycle, type ManagedLedgerStatus } from './managed-ledger-lifecycle.js';
import { findByEventTime, findByOffset, findByTime, resolveSeekTarget } from './ledgers/position-lookup.js';
import { checkPosition } from './position.js';
import { ReadWaiters, type WaitOptions } from './ledgers/read-waiters.js';

export type { ManagedLedgerStatus } from './managed-ledger-lifecycle.js';
export type { ReadOptions } from './ledgers/ledger-reads.js';

/**
 * A topic's log as its writer owner holds it: ledgers in the ledger store, ManagedLedgerInfo in metadata, continuous
 * offsets in every entry, and the cursors of its subscriptions. See docs/architecture.md "Ownership and fencing" and
 * "Two-phase ledger deletion (PIP-129)". The class holds its life and public API; each path lives in a module of its
 * own: open (managed-ledger-open.ts, hand-over-state.ts), append (append-pipeline.ts), rollover
 * (ledger-rollover.ts), trim (ledger-trimmer.ts), read (ledger-reads.ts, position-lookup.ts).
 */
export class ManagedLedger {
  private readonly lifecycle: ManagedLedgerLifecycle;
  private readonly pipeline: AppendPipeline;
  private readonly waiters: ReadWaiters;
  private readonly trimmer: LedgerTrimmer;
  private readonly maintenance: LedgerMaintenance;
  private readonly cursors: CursorRegistry;
  private readonly adoptedListeners = new Set<(entries: ManagedLedgerEntry[]) => void>();
  private readonly stored = new StoredBytes();
  /** Appends as `append` does, telling a listener the outcome with a token and an index: no promise per entry. */
  readonly appendWith: AppendPipeline['submitWith'];

  private constructor(
    private readonly ctx: LedgerContext,
    terminated: boolean,
  ) {
    this.lifecycle = new ManagedLedgerLifecycle(ctx.name, terminated);
    this.waiters = new ReadWaiters(ctx.config.maxReadWaiters);
    this.pipeline = new AppendPipeline(
      ledgerAppendHost(ctx, this.lifecycle, this.waiters, this.adoptedListeners, {
        rolledOver: () => this.trimmer.schedule(),
        fenced: (err) => this.onFenced(err),
      }),
    );
    this.appendWith = this.pipeline.submitWith.bind(this.pipeline);
    this.cursors = new CursorRegistry(this.cursorHost());
    this.trimmer = new LedgerTrimmer(ctx, this.cursors, this.lifecycle);
    this.maintenance = new LedgerMaintenance(ctx, this.lifecycle, this.pipeline, this.trimmer);
  }

  /**
   * Opens the topic's managed ledger as its owner. A previous owner's last
   * ledger is fenced and closed, so none of its later appends can succeed.
   */
  static async open(
    topic: string | TopicName,
    deps: ManagedLedgerDependencies,
    options: ManagedLedgerOpenOptions = {},
  ): Promise<ManagedLedger> {
    // The keeper reports a lost compare-and-set to the managed ledger built below.
    const owner: { ledger?: ManagedLedger } = {};
    const { ctx, storedCursors } = await openOwnerContext(topic, deps, options, (err) =>
      owner.ledger?.onFenced(LedgerlineError.from(err)),
    );
    const ledger = new ManagedLedger(ctx, ctx.current === undefined);
    owner.ledger = ledger;
    try {
      await ledger.cursors.recoverAll(storedCursors);
    } catch (err) {
      await ledger.close().catch(() => undefined);
      throw err;
    }
    ledger.maintenance.start();
    return ledger;
  }

  get topic(): string {
    return this.ctx.topic;
  }

  /** The metadata path of the ManagedLedgerInfo node. */
  get path(): string {
    return this.ctx.path;
  }

  /** Pulsar's managed ledger name: tenant/namespace/persistent/encoded-local. */
  get name(): string {
    return this.ctx.name;
  }

  get config(): ManagedLedgerConfig {
    return this.ctx.config;
  }

  get state(): ManagedLedgerStatus {
    return this.lifecycle.status;
  }

  /** The offset of the last acknowledged message; -1 when none. */
  get lastOffset(): number {
    return this.ctx.assigner.committedEnd;
  }

  /** Appends one entry of `numMessages` messages; resolves in call order once the store holds it, with its place. */
  append(payload: Uint8Array, numMessages = 1, options?: AppendOptions): Promise<AppendResult> {
    return this.pipeline.submit(payload, numMessages, options);
  }

  /**
   * True while appends failed as in doubt (APPEND_OUTCOME_UNKNOWN) and the
   * ledger they were written to is not checked yet: an entry of theirs may be
   * in the log, unknown to the caller.
   */
  get appendsInDoubt(): boolean {
    return this.pipeline.appendsInDoubt;
  }

  /**
   * Learns the outcome of appends failed as in doubt (see appendsInDoubt):
   * the ledger is checked, and the entries of theirs that landed reach the
   * onEntriesAdopted listeners before this resolves. Rejects (UNAVAILABLE
   * LEDGER_WRITE_FAILED) when the ledger store cannot tell yet.
   */
  settleAppends(): Promise<void> {
    return this.pipeline.settle();
  }

  /**
   * Calls `listener` with entries found in the log whose appends had failed
   * as in doubt, once they are readable; returns the function that removes it.
   * A writer that deduplicates learns from it that a resend is a duplicate.
   */
  onEntriesAdopted(listener: (entries: ManagedLedgerEntry[]) => void): () => void {
    this.adoptedListeners.add(listener);
    return () => this.adoptedListeners.delete(listener);
  }

  /**
   * Entries from `from` on (at least one when one exists, at most the limits);
   * [] when none is stored yet. The limits come as `{maxEntries, maxBytes}` or
   * as `readEntries(from, maxEntries, maxBytes)`.
   */
  async readEntries(
    from: Position,
    limitsOrMaxEntries: ReadOptions | number = {},
    maxBytes?: number,
  ): Promise<ManagedLedgerEntry[]> {
    this.lifecycle.checkReadable();
    const limits = readLimits(this.ctx, limitsOrMaxEntries, maxBytes);
    return readEntries(this.ctx, checkPosition(from, 'from'), limits);
  }

  /**
   * Like readEntries, but waits for entries when none is stored at or after
   * `from` yet. Resolves [] on timeout, abort, or when the topic is terminated.
   */
  async readEntriesOrWait(from: Position, options: ReadOptions & WaitOptions = {}): Promise<ManagedLedgerEntry[]> {
    for (;;) {
      const entries = await this.readEntries(from, options);
      if (entries.length > 0 || this.lifecycle.status === 'terminated') return entries;
      if (!(await this.waitForEntries(options))) return [];
    }
  }

  /** Waits until more entries are confirmed; false on timeout or abort. */
  async waitForEntries(options: WaitOptions = {}): Promise<boolean> {
    this.lifecycle.checkReadable();
    return this.waiters.wait(options);
  }

  /** The entry holding message `offset` (at most one storage read). */
  async findPosition(offset: number): Promise<MessagePosition> {
    this.lifecycle.checkReadable();
    return findByOffset(this.ctx, offset);
  }

  /** The first entry whose broker time (`byEventTime`: message whose own time) is >= `timestampMs`; one read as a rule. */
  async findPositionByTime(timestampMs: number, options?: { byEventTime?: boolean }): Promise<MessagePosition> {
    this.lifecycle.checkReadable();
    return options?.byEventTime === true ? findByEventTime(this.ctx, timestampMs) : findByTime(this.ctx, timestampMs);
  }

  /** The ledgers, oldest first, with the open one's live counts. */
  ledgers(): LedgerView[] {
    return ledgerViews(this.ctx.keeper.info.ledgers, this.ctx.current);
  }

  /**
   * Bytes of the entries in this managed ledger's ledgers (the sum of
   * ledgers()' sizeBytes), kept so that asking costs O(1) between ledger
   * switches and trims: an owner sums it over every topic it holds.
   */
  storedBytes(): number {
    return this.stored.of(this.ctx.keeper.info.ledgers, this.ctx.current);
  }

  /** The last acknowledged entry; undefined when the topic holds none. */
  lastConfirmedPosition(): Position | undefined {
    return lastEntry(this.ledgers());
  }

  /** Where the next entry goes (after the last one). */
  endPosition(): Position | undefined {
    return endPosition(this.ledgers());
  }

  /** A copy of the ManagedLedgerInfo as last written, and its version. */
  info(): { info: ManagedLedgerInfoModel; version: number } {
    return { info: cloneInfo(this.ctx.keeper.info), version: this.ctx.keeper.version };
  }

  /** What its clean close left in the metadata store, for the next owner (a transfer); undefined before it. */
  handOverState(): HandOverState | undefined {
    const cleanlyClosed = this.lifecycle.status === 'closed' && this.lifecycle.fenceError === undefined;
    return cleanlyClosed ? handOverStateOf(this.ctx.keeper, this.cursors) : undefined;
  }

  stats() {
    const ledgers = this.ledgers();
    return {
      ledgers: ledgers.length,
      entries: ledgers.reduce((sum, l) => sum + l.entries, 0),
      sizeBytes: ledgers.reduce((sum, l) => sum + l.sizeBytes, 0),
      lastOffset: this.lastOffset,
      pendingAppends: this.pipeline.pendingAppends,
      pendingAppendBytes: this.pipeline.pendingBytes,
      cacheBytes: this.ctx.cache.sizeBytes,
      cacheHits: this.ctx.cache.hits,
      cacheMisses: this.ctx.cache.misses,
      deletableLedgers: this.ctx.keeper.info.deletableLedgers.length,
    };
  }

  /** The internals other modules of this package work on (cursors). */
  get context(): LedgerContext {
    return this.ctx;
  }

  /** Another owner took the topic: refuse appends from now on and wake readers. */
  onFenced(err: LedgerlineError): void {
    if (!this.lifecycle.fence(err)) return;
    this.ctx.logger.warn(
      { managedLedger: this.ctx.name, reason: err.reason },
      'managed ledger fenced by another owner',
    );
    this.pipeline.stop(err);
    this.cursors.discardAll('fenced');
    this.waiters.notifyAll();
    discardUnrecordedLedgers(this.ctx).catch(unexpectedRejection);
  }

  /**
   * Removes the ledgers no cursor needs and retention does not keep, and
   * records them deletable in the same compare-and-set (PIP-129 phase 1).
   * The garbage collector deletes them later. Returns the ledger ids trimmed.
   */
  trim(): Promise<number[]> {
    return this.trimmer.trim();
  }

  /**
   * The first offset a reader may read because of records deleted before it
   * (deleteRecordsBefore); 0 when none were. Retention may have trimmed
   * further: the earliest retained offset is the larger of the two.
   */
  get lowWatermark(): number {
    return storedLowWatermark(this.ctx.keeper.info);
  }

  /**
   * Deletes the messages before `offset` (Kafka's DeleteRecords; see
   * ledgers/delete-records.ts); resolves with the low watermark.
   */
  async deleteRecordsBefore(offset: number): Promise<number> {
    this.lifecycle.checkServing();
    return deleteRecordsBefore(this.ctx, this.cursors.all(), this.trimmer, offset);
  }

  /** Opens a cursor, creating it at `options.start` (latest by default) when it does not exist. */
  async openCursor(name: string, options: OpenCursorOptions = {}): Promise<ManagedCursor> {
    this.lifecycle.checkServing();
    return this.cursors.open(name, options);
  }

  getCursor(name: string): ManagedCursor | undefined {
    return this.cursors.get(name);
  }

  /** The open cursors. */
  getCursors(): ManagedCursor[] {
    return this.cursors.all();
  }

  /** Deletes a cursor; its ledger becomes deletable. Deleting a missing cursor does nothing. */
  async deleteCursor(name: string): Promise<void> {
    this.lifecycle.checkServing();
    await this.cursors.delete(name);
  }

  /** The hooks cursors use. */
  private cursorHost(): CursorHost {
    return {
      ctx: this.ctx,
      views: () => this.ledgers(),
      readEntries: (from, options) => this.readEntries(from, options),
      waitForEntries: (options) => this.waitForEntries(options),
      resolveSeekTarget: (target) => resolveSeekTarget(target, this),
      markDeletable: (records) => this.markDeletable(records),
      cursorMoved: () => this.trimmer.schedule(),
      cursorFenced: (err) => this.onFenced(managedLedgerFencedError(this.ctx.name, err)),
      infoVersion: () => this.ctx.keeper.version,
    };
  }

  /**
   * Records ledgers deletable in ManagedLedgerInfo, one compare-and-set (see
   * deletable-ledgers.ts): cursor ledgers no cursor node names any more.
   */
  async markDeletable(records: DeletableLedgerRecord[]): Promise<void> {
    await markDeletable(this.ctx, records);
  }

  /**
   * Stops appends for good: waits for pending appends, closes the current
   * ledger and records the managed ledger TERMINATED with its last position.
   * If recording fails, appends stay refused and calling terminate again
   * retries the recording; closing instead records the topic as still open.
   */
  async terminate(): Promise<Position | undefined> {
    // Terminated and recorded (the current ledger is gone only once the compare-and-set succeeded).
    if (this.lifecycle.status === 'terminated' && this.ctx.current === undefined) return this.lastConfirmedPosition();
    this.lifecycle.checkServing();
    this.lifecycle.status = 'terminated';
    await this.pipeline.whenIdle();
    const last = this.lastConfirmedPosition();
    await sealAndRecordTerminated(this.ctx, last);
    this.waiters.notifyAll();
    return last;
  }

  /**
   * Deletes the topic's data in the two-phase way: in one compare-and-set
   * the managed ledger is marked DELETING and every ledger (data and cursor)
   * becomes deletable; the garbage collector removes them and then the node.
   */
  async delete(): Promise<void> {
    const error = deletingError(this.ctx.name);
    if (this.lifecycle.fenceError !== undefined) throw this.lifecycle.fenceError;
    const cursorLedgers = this.cursors.cursorLedgers();
    const cursorNames = this.cursors.all().map((c) => c.name);
    this.lifecycle.status = 'deleted';
    this.maintenance.stop();
    this.pipeline.stop(error);
    this.cursors.discardAll('deleted');
    await recordDeletion(this.ctx, cursorLedgers, cursorNames);
    this.waiters.failAll(error);
  }

  /**
   * Closes this owner's hold: pending appends finish, the current ledger is
   * closed and recorded. Reads and appends fail afterwards.
   */
  async close(): Promise<void> {
    const status = this.lifecycle.status;
    if (status === 'closed' || status === 'deleted' || status === 'closing') return;
    const fenced = this.lifecycle.fenceError !== undefined;
    this.lifecycle.status = 'closing';
    this.maintenance.stop();
    await this.pipeline.whenIdle();
    // Independent writes (the keeper orders ManagedLedgerInfo's), side by side: in a row they lengthened every transfer's
    // pause. Neither throws. A current ledger is left by an open topic, and by a terminate that failed to record itself.
    if (!fenced) await Promise.all([this.cursors.closeAll(), this.ctx.current && sealAndRecordOnClose(this.ctx)]);
    this.lifecycle.status = 'closed';
    this.ctx.cache.clear();
    this.waiters.failAll(closedError(this.ctx.name));
  }
}
