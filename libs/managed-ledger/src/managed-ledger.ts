import { type Position } from '@ledgerline/cursor-codec';
import { encodeLedgersDeletable, LEDGERS_DELETABLE_SUBJECT } from '@ledgerline/bus';
import { managedLedgerPath, MANAGED_LEDGERS_ROOT, TopicName } from '@ledgerline/naming';
import { OffsetAssigner, type MessagePosition } from '@ledgerline/offset-index';
import { invalidArgument, LedgerlineError, unexpectedRejection } from '@ledgerline/errors';
import { AppendPipeline, type AppendHost } from './append-pipeline.js';
import { resolveManagedLedgerConfig, type ManagedLedgerConfig, type ManagedLedgerConfigInput } from './config.js';
import { type LedgerContext, type ManagedLedgerDependencies } from './context.js';
import { defaultManagedLedgerLogger } from './default-logger.js';
import { EntryCache } from './entry-cache.js';
import type { AppendResult, ManagedLedgerEntry } from './entry.js';
import {
  closedError,
  deletingError,
  managedLedgerFencedError,
  ManagedLedgerReason,
  terminatedError,
} from './errors.js';
import { InfoKeeper } from './info-keeper.js';
import { discardIfUnnamed, fenceAndClose } from './ledger-factory.js';
import { checkReadLimits, readEntries } from './ledger-reads.js';
import { publishManagedLedgerChange, rollover, sealAndRecord, shouldRollover } from './ledger-rollover.js';
import { endPosition, lastEntry, ledgerViews, type LedgerView } from './ledger-views.js';
import {
  cloneInfo,
  markDeleting,
  withDeletable,
  type DeletableLedgerRecord,
  type ManagedLedgerInfoModel,
} from './managed-ledger-info.js';
import { openAsOwner } from './managed-ledger-open.js';
import { managedLedgerMetrics } from './metrics.js';
import { OffsetTables } from './offset-tables.js';
import type { OpenLedger } from './open-ledger.js';
import { findByOffset, findByTime } from './position-lookup.js';
import { checkPosition } from './position.js';
import { ReadWaiters, type WaitOptions } from './read-waiters.js';
import { CursorRegistry, type OpenCursorOptions } from './cursor-registry.js';
import type { CursorHost, ManagedCursor, SeekTarget } from './managed-cursor.js';
import { ledgersToTrim } from './trimming.js';

export type ManagedLedgerStatus = 'open' | 'terminated' | 'fenced' | 'closing' | 'closed' | 'deleted';

export interface ManagedLedgerOpenOptions {
  config?: ManagedLedgerConfigInput;
  /** The namespace's numberOfTopicBuckets (PIP-157); 1 when omitted. */
  numberOfTopicBuckets?: number;
}

export interface ReadOptions {
  maxEntries?: number;
  maxBytes?: number;
}

/**
 * A topic's log as its writer owner holds it: ledgers in the ledger store,
 * ManagedLedgerInfo in metadata, continuous offsets in every entry, and the
 * cursors of its subscriptions. See ARCHITECTURE.md "Ownership and fencing"
 * and "Two-phase ledger deletion".
 */
export class ManagedLedger {
  private status: ManagedLedgerStatus;
  private fenceError: LedgerlineError | undefined;
  private readonly pipeline: AppendPipeline;
  private readonly waiters: ReadWaiters;
  private maintenance: NodeJS.Timeout | undefined;
  private trimChain: Promise<unknown> = Promise.resolve();
  private trimWaiting: Promise<number[]> | undefined;
  /** False until every stored cursor is recovered: the slowest cursor is not known before. */
  private trimAllowed = false;
  private readonly cursors: CursorRegistry;
  private readonly adoptedListeners = new Set<(entries: ManagedLedgerEntry[]) => void>();

  private constructor(
    private readonly ctx: LedgerContext,
    terminated: boolean,
  ) {
    this.status = terminated ? 'terminated' : 'open';
    this.waiters = new ReadWaiters(ctx.config.maxReadWaiters);
    this.pipeline = new AppendPipeline(this.appendHost());
    this.cursors = new CursorRegistry(this.cursorHost());
  }

  /**
   * Starts rollover by age and trimming, once every stored cursor is
   * recovered: trimming before then would not see the cursors still being
   * read, and could mark ledgers they have not consumed deletable.
   */
  private cursorsRecovered(): void {
    this.trimAllowed = true;
    if (this.ctx.config.maintenanceIntervalMs > 0 && this.status === 'open') {
      this.maintenance = setInterval(() => this.runMaintenance(), this.ctx.config.maintenanceIntervalMs);
      this.maintenance.unref();
    }
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
    const config = resolveManagedLedgerConfig(options.config);
    const topicName = typeof topic === 'string' ? TopicName.parse(topic) : topic;
    const path = managedLedgerPath(topicName, options.numberOfTopicBuckets ?? 1);
    const now = deps.clock ?? Date.now;
    const assigner = new OffsetAssigner({
      maxPendingEntries: config.maxPendingAppends,
      maxAppendAttempts: config.writeRetryMaxAttempts,
    });
    const recovered = await openAsOwner({
      path,
      topic: topicName.toString(),
      config,
      store: deps.ledgerStore,
      metadata: deps.metadata,
      assigner,
      now,
    });
    // The keeper reports a lost compare-and-set to the managed ledger built below.
    const owner: { ledger?: ManagedLedger } = {};
    const keeper = new InfoKeeper(deps.metadata, path, recovered.info, recovered.version, (err) =>
      owner.ledger?.onFenced(LedgerlineError.from(err)),
    );
    const ctx: LedgerContext = {
      path,
      name: path.slice(MANAGED_LEDGERS_ROOT.length + 1),
      topic: topicName.toString(),
      config,
      store: deps.ledgerStore,
      metadata: deps.metadata,
      bus: deps.bus,
      logger: deps.logger ?? defaultManagedLedgerLogger(),
      metrics: managedLedgerMetrics(deps.metricsRegistry),
      now,
      keeper,
      assigner,
      cache: new EntryCache(config.entryCacheMaxBytes),
      offsetTables: new OffsetTables(deps.ledgerStore, config.maxCachedOffsetTables),
      current: recovered.current,
      unrecordedLedgers: new Set(),
    };
    for (const [ledgerId, table] of recovered.recoveredTables) ctx.offsetTables.remember(ledgerId, table);
    const ledger = new ManagedLedger(ctx, recovered.current === undefined);
    owner.ledger = ledger;
    try {
      await ledger.cursors.recoverAll();
    } catch (err) {
      await ledger.close().catch(() => undefined);
      throw err;
    }
    ledger.cursorsRecovered();
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
    return this.status;
  }

  /** The offset of the last acknowledged message; -1 when none. */
  get lastOffset(): number {
    return this.ctx.assigner.committedEnd;
  }

  /**
   * Appends one entry holding `numMessages` messages. Resolves, in call
   * order, once the ledger store holds it, with its position and offsets.
   */
  append(payload: Uint8Array, numMessages = 1): Promise<AppendResult> {
    return this.pipeline.submit(payload, numMessages);
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
    this.checkReadable();
    const options =
      typeof limitsOrMaxEntries === 'number' ? { maxEntries: limitsOrMaxEntries, maxBytes } : limitsOrMaxEntries;
    const limits = checkReadLimits(this.ctx, options.maxEntries, options.maxBytes);
    return readEntries(this.ctx, checkPosition(from, 'from'), limits);
  }

  /**
   * Like readEntries, but waits for entries when none is stored at or after
   * `from` yet. Resolves [] on timeout, abort, or when the topic is terminated.
   */
  async readEntriesOrWait(from: Position, options: ReadOptions & WaitOptions = {}): Promise<ManagedLedgerEntry[]> {
    for (;;) {
      const entries = await this.readEntries(from, options);
      if (entries.length > 0 || this.status === 'terminated') return entries;
      if (!(await this.waitForEntries(options))) return [];
    }
  }

  /** Waits until more entries are confirmed; false on timeout or abort. */
  async waitForEntries(options: WaitOptions = {}): Promise<boolean> {
    this.checkReadable();
    return this.waiters.wait(options);
  }

  /** The entry holding message `offset` (at most one storage read). */
  async findPosition(offset: number): Promise<MessagePosition> {
    this.checkReadable();
    return findByOffset(this.ctx, offset);
  }

  /** The first entry whose broker timestamp is at least `timestampMs` (at most one storage read). */
  async findPositionByTime(timestampMs: number): Promise<MessagePosition> {
    this.checkReadable();
    return findByTime(this.ctx, timestampMs);
  }

  /** The ledgers, oldest first, with the open one's live counts. */
  ledgers(): LedgerView[] {
    return ledgerViews(this.ctx.keeper.info.ledgers, this.ctx.current);
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

  private checkReadable(): void {
    if (this.status === 'closed' || this.status === 'deleted') throw closedError(this.ctx.name);
  }

  /** The hooks the append pipeline drives. */
  private appendHost(): AppendHost {
    const ctx = this.ctx;
    return {
      name: ctx.name,
      config: ctx.config,
      assigner: ctx.assigner,
      now: ctx.now,
      writeBlocker: () => this.writeBlocker(),
      submitBlocker: () => this.submitBlocker(),
      currentLedger: () => ctx.current,
      rolloverDue: (ledger) => shouldRollover(ledger, ctx.config, ctx.now()),
      rollover: async () => {
        await rollover(ctx);
        this.scheduleTrim();
      },
      sealLedger: (ledgerId) => fenceAndClose(ctx.store, ledgerId),
      readLedger: (ledgerId, first, last) => ctx.store.read(ledgerId, first, last),
      entriesConfirmed: (ledger, entries) => this.onEntriesConfirmed(ledger, entries),
      entriesAdopted: (entries) => {
        for (const listener of [...this.adoptedListeners]) {
          try {
            listener(entries);
          } catch (err) {
            ctx.logger.warn({ managedLedger: ctx.name, error: String(err) }, 'an adopted-entries listener failed');
          }
        }
      },
      fence: (err) => this.onFenced(err),
      logWarning: (message, details) => {
        ctx.metrics.writeFailures.inc({ topic: ctx.topic });
        ctx.logger.warn(details, message);
      },
    };
  }

  private onEntriesConfirmed(_ledger: OpenLedger, entries: ManagedLedgerEntry[]): void {
    for (const entry of entries) this.ctx.cache.put(entry);
    this.ctx.metrics.appendedEntries.inc({ topic: this.ctx.topic }, entries.length);
    this.waiters.notifyAll();
  }

  /** Why the write loop must stop: another owner, or the managed ledger is gone. */
  private writeBlocker(): LedgerlineError | undefined {
    if (this.fenceError !== undefined) return this.fenceError;
    if (this.status === 'closed') return closedError(this.ctx.name);
    if (this.status === 'deleted') return deletingError(this.ctx.name);
    return undefined;
  }

  /** Why a new append is refused now. */
  private submitBlocker(): LedgerlineError | undefined {
    const blocker = this.writeBlocker();
    if (blocker !== undefined) return blocker;
    if (this.status === 'terminated') return terminatedError(this.ctx.name);
    if (this.status !== 'open') return closedError(this.ctx.name);
    return undefined;
  }

  /** Another owner took the topic: refuse appends from now on and wake readers. */
  onFenced(err: LedgerlineError): void {
    if (this.fenceError !== undefined) return;
    this.fenceError = err;
    if (this.status === 'open' || this.status === 'terminated') this.status = 'fenced';
    this.ctx.logger.warn(
      { managedLedger: this.ctx.name, reason: err.reason },
      'managed ledger fenced by another owner',
    );
    this.pipeline.stop(err);
    this.cursors.discardAll('fenced');
    this.waiters.notifyAll();
    this.discardUnrecordedLedgers().catch(unexpectedRejection);
  }

  /**
   * Ledgers whose recording was in doubt, and deletable markers not yet
   * written, when this owner stops writing the node (fenced, or closing
   * without recording): the ones the node does not name go, since no later
   * update of ours will record them.
   */
  private async discardUnrecordedLedgers(): Promise<void> {
    const ctx = this.ctx;
    const ledgerIds = [...ctx.unrecordedLedgers, ...ctx.keeper.takePending().map((r) => r.ledgerId)];
    ctx.unrecordedLedgers.clear();
    await Promise.all(ledgerIds.map((ledgerId) => discardIfUnnamed(ctx.metadata, ctx.store, ctx.path, ledgerId)));
  }

  private runMaintenance(): void {
    const current = this.ctx.current;
    if (this.status !== 'open') return;
    if (current !== undefined && !current.sealed && shouldRollover(current, this.ctx.config, this.ctx.now())) {
      this.pipeline.requestRollover();
    }
    this.scheduleTrim();
  }

  private scheduleTrim(): void {
    void this.trim().catch((err: unknown) =>
      this.ctx.logger.warn(
        { managedLedger: this.ctx.name, error: String(err) },
        'trimming failed; it runs again later',
      ),
    );
  }

  /**
   * Removes the ledgers no cursor needs and retention does not keep, and
   * records them deletable in the same compare-and-set (PIP-129 phase 1).
   * The garbage collector deletes them later. Returns the ledger ids trimmed.
   */
  trim(): Promise<number[]> {
    if (!this.trimAllowed || (this.status !== 'open' && this.status !== 'terminated')) return Promise.resolve([]);
    // One trim runs at a time; callers arriving meanwhile share the next run, which sees the latest cursors.
    if (this.trimWaiting !== undefined) return this.trimWaiting;
    const next = this.trimChain.then(() => {
      this.trimWaiting = undefined;
      return this.trimOnce();
    });
    this.trimWaiting = next;
    this.trimChain = next.catch(() => undefined);
    return next;
  }

  private async trimOnce(): Promise<number[]> {
    const ctx = this.ctx;
    const pendingMarkers = ctx.keeper.info.deletableLedgers.length;
    if (pendingMarkers >= ctx.config.maxDeletableLedgers) {
      ctx.logger.warn({ managedLedger: ctx.name, pendingMarkers }, 'trimming paused: the garbage collector is behind');
      return [];
    }
    const choose = (info: ManagedLedgerInfoModel) => {
      const room = ctx.config.maxDeletableLedgers - info.deletableLedgers.length;
      const views = ledgerViews(info.ledgers, ctx.current);
      return ledgersToTrim(views, this.slowestMarkDelete(), ctx.config, ctx.now()).slice(0, Math.max(room, 0));
    };
    if (choose(ctx.keeper.info).length === 0) return [];
    const trimmed = await ctx.keeper.update((info) => {
      const ids = new Set(choose(info).map((v) => v.ledgerId));
      info.ledgers = info.ledgers.filter((l) => !ids.has(l.ledgerId));
      const markedAtMs = ctx.now();
      const records = [...ids].map((ledgerId) => ({ ledgerId, component: 'managed-ledger' as const, markedAtMs }));
      info.deletableLedgers = withDeletable(info, records);
      return [...ids];
    });
    for (const ledgerId of trimmed) {
      ctx.cache.evictLedger(ledgerId);
      ctx.offsetTables.forget(ledgerId);
    }
    if (trimmed.length > 0) {
      ctx.metrics.trimmedLedgers.inc({ topic: ctx.topic }, trimmed.length);
      this.publishDeletable(trimmed);
      // Read-only views drop the trimmed ledgers (and move readers past them) without waiting for their refresh.
      publishManagedLedgerChange(ctx, 'info-changed');
    }
    return trimmed;
  }

  /** The mark-delete position of the slowest cursor; undefined when there are no cursors. */
  private slowestMarkDelete(): Position | undefined {
    return this.cursors.slowestMarkDelete();
  }

  /** Opens a cursor, creating it at `options.start` (latest by default) when it does not exist. */
  async openCursor(name: string, options: OpenCursorOptions = {}): Promise<ManagedCursor> {
    if (this.status !== 'open' && this.status !== 'terminated')
      throw this.submitBlocker() ?? closedError(this.ctx.name);
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
    if (this.status !== 'open' && this.status !== 'terminated')
      throw this.submitBlocker() ?? closedError(this.ctx.name);
    await this.cursors.delete(name);
  }

  /** The hooks cursors use. */
  private cursorHost(): CursorHost {
    return {
      ctx: this.ctx,
      views: () => this.ledgers(),
      readEntries: (from, options) => this.readEntries(from, options),
      waitForEntries: (options) => this.waitForEntries(options),
      resolveSeekTarget: (target) => this.resolveSeekTarget(target),
      markDeletable: (records) => this.markDeletable(records),
      cursorMoved: () => this.scheduleTrim(),
      cursorFenced: (err) => this.onFenced(managedLedgerFencedError(this.ctx.name, err)),
      infoVersion: () => this.ctx.keeper.version,
    };
  }

  /** The entry a seek lands on: the first one a reader then gets. */
  private async resolveSeekTarget(target: SeekTarget): Promise<Position> {
    if (typeof target !== 'object' || target === null) {
      throw invalidArgument(
        ManagedLedgerReason.INVALID_SEEK_TARGET,
        'a seek target is {position}, {offset} or {timestampMs}',
      );
    }
    if ('position' in target) return checkPosition(target.position);
    const found =
      'offset' in target ? await this.findPosition(target.offset) : await this.findPositionByTime(target.timestampMs);
    return { ledgerId: found.ledgerId, entryId: found.entryId };
  }

  /**
   * Records ledgers deletable in ManagedLedgerInfo, one compare-and-set: cursor
   * ledgers no cursor node names any more (switched away from, or of a
   * deleted cursor). If the write fails without an answer, the next update
   * carries them; if another owner took the topic, nobody can name them, so
   * they are deleted here rather than left behind.
   */
  async markDeletable(records: DeletableLedgerRecord[]): Promise<void> {
    if (records.length === 0) return;
    try {
      await this.ctx.keeper.update((info) => {
        info.deletableLedgers = withDeletable(info, records);
      });
    } catch (err) {
      this.ctx.keeper.markLater(records);
      if (this.ctx.keeper.isFenced) await this.discardUnrecordedLedgers();
      throw err;
    }
    this.publishDeletable(records.map((r) => r.ledgerId));
  }

  private publishDeletable(ledgerIds: number[]): void {
    const bus = this.ctx.bus;
    if (bus === undefined) return;
    const payload = encodeLedgersDeletable({ name: this.ctx.name, ledgerIds });
    void bus.publish(LEDGERS_DELETABLE_SUBJECT, payload).catch(() => undefined);
  }

  /**
   * Stops appends for good: waits for pending appends, closes the current
   * ledger and records the managed ledger TERMINATED with its last position.
   * If recording fails, appends stay refused and calling terminate again
   * retries the recording; closing instead records the topic as still open.
   */
  async terminate(): Promise<Position | undefined> {
    // Terminated and recorded (the current ledger is gone only once the compare-and-set succeeded).
    if (this.status === 'terminated' && this.ctx.current === undefined) return this.lastConfirmedPosition();
    if (this.status !== 'open' && this.status !== 'terminated')
      throw this.submitBlocker() ?? closedError(this.ctx.name);
    this.status = 'terminated';
    await this.pipeline.whenIdle();
    const last = this.lastConfirmedPosition();
    await sealAndRecord(this.ctx, (info) => {
      info.state = 'terminated';
      if (last !== undefined) info.terminatedPosition = last;
    });
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
    if (this.fenceError !== undefined) throw this.fenceError;
    const cursorLedgers = this.cursors.cursorLedgers();
    const cursorNames = this.cursors.all().map((c) => c.name);
    this.status = 'deleted';
    this.stopTimers();
    this.pipeline.stop(error);
    this.cursors.discardAll('deleted');
    const current = this.ctx.current;
    if (current !== undefined && !current.sealed) {
      await fenceAndClose(this.ctx.store, current.ledgerId).catch(() => undefined);
    }
    const nowMs = this.ctx.now();
    // Ledgers whose recording was in doubt are marked too: the topic's node is the last place that can name them.
    const unrecorded = [...this.ctx.unrecordedLedgers].map((ledgerId) => ({
      ledgerId,
      component: 'managed-ledger' as const,
      markedAtMs: nowMs,
    }));
    await this.ctx.keeper.update((info) => {
      Object.assign(info, markDeleting(info, cursorLedgers, nowMs));
      info.deletableLedgers = withDeletable(info, unrecorded);
    });
    this.ctx.unrecordedLedgers.clear();
    // The markers are safe in the managed ledger node; the cursor nodes below it can go.
    for (const name of cursorNames) {
      await this.ctx.metadata.deleteCursorInfo(this.ctx.path, name).catch(() => undefined);
    }
    this.publishDeletable([...this.ctx.keeper.info.deletableLedgers.map((d) => d.ledgerId)]);
    this.ctx.cache.clear();
    this.waiters.failAll(error);
  }

  /**
   * Closes this owner's hold: pending appends finish, the current ledger is
   * closed and recorded. Reads and appends fail afterwards.
   */
  async close(): Promise<void> {
    if (this.status === 'closed' || this.status === 'deleted' || this.status === 'closing') return;
    const fenced = this.fenceError !== undefined;
    this.status = 'closing';
    this.stopTimers();
    await this.pipeline.whenIdle();
    if (!fenced) await this.cursors.closeAll();
    // A current ledger is left by an open topic, and by a terminate that could not record itself (it failed).
    if (!fenced && this.ctx.current !== undefined) {
      await sealAndRecord(this.ctx).catch(async (err: unknown) => {
        this.ctx.logger.warn(
          { managedLedger: this.ctx.name, error: String(err) },
          'closing the current ledger failed; the next owner recovers it',
        );
        // The next owner recovers what the node names; ledgers it does not name would be left behind.
        await this.discardUnrecordedLedgers();
      });
    }
    this.status = 'closed';
    this.ctx.cache.clear();
    this.waiters.failAll(closedError(this.ctx.name));
  }

  private stopTimers(): void {
    if (this.maintenance !== undefined) clearInterval(this.maintenance);
    this.maintenance = undefined;
  }
}
