import { setImmediate as nextTurn } from 'node:timers/promises';
import { backOff } from 'exponential-backoff';
import { MAX_BATCH_SIZE } from '@ledgerline/cursor-codec';
import type { LedgerEntry } from '@ledgerline/ledger-store';
import { decodeEntry, encodeEntry, type OffsetAssigner } from '@ledgerline/offset-index';
import { invalidArgument, LedgerlineError, unexpectedRejection } from '@ledgerline/errors';
import { AppendQueue, type AppendOp } from './append-queue.js';
import type { ManagedLedgerConfig } from './config.js';
import type { AppendResult, ManagedLedgerEntry } from './entry.js';
import {
  appendOutcomeUnknownError,
  isFencing,
  isLedgerFenced,
  ledgerFencedError,
  ManagedLedgerReason,
} from './errors.js';
import type { OpenLedger } from './open-ledger.js';
import { LedgerStoreReason } from '@ledgerline/ledger-store';

/** Framing adds at most this much to a payload: 6 header bytes and two tagged uint64 varints. */
export const MAX_FRAMING_BYTES = 24;
/** Entries read back per call when a failed write is checked. */
const READ_BACK_PAGE = 1_000;

/** What the pipeline needs from the managed ledger that owns it. */
export interface AppendHost {
  readonly name: string;
  readonly config: ManagedLedgerConfig;
  readonly assigner: OffsetAssigner;
  now(): number;
  /** Why the write loop must stop (fenced, closed), or undefined; queued appends then fail with it. */
  writeBlocker(): LedgerlineError | undefined;
  /** Why a new append is refused (also closing, terminating), or undefined. */
  submitBlocker(): LedgerlineError | undefined;
  currentLedger(): OpenLedger | undefined;
  rolloverDue(ledger: OpenLedger): boolean;
  /** Seals the current ledger if needed, opens the next one and records both with one compare-and-set. */
  rollover(): Promise<void>;
  /** Fences and closes our own ledger after a failed write; returns its last-add-confirmed. */
  sealLedger(ledgerId: number): Promise<number>;
  readLedger(ledgerId: number, firstEntryId: number, lastEntryId: number): Promise<LedgerEntry[]>;
  /** Called after entries are confirmed, before their appends resolve. */
  entriesConfirmed(ledger: OpenLedger, entries: ManagedLedgerEntry[]): void;
  /** Called after entriesConfirmed for entries found stored whose appends had already failed as in doubt. */
  entriesAdopted(entries: ManagedLedgerEntry[]): void;
  /** Another owner took the topic: the host fails everything and refuses appends from now on. */
  fence(err: LedgerlineError): void;
  logWarning(message: string, details: Record<string, unknown>): void;
}

/**
 * The write side of a managed ledger: appends are queued, written in order
 * by one loop in batches (group commit: one store write in flight, so the
 * store can never reorder two of our writes; the loop lets the event loop
 * turn once before each write, so appends already received join it, and a
 * failed write fails or retries all of them together), and acknowledged in order once
 * the store holds them. A failed write seals the ledger, learns from the
 * store which entries landed (they are acknowledged, never written twice),
 * rolls to a new ledger and sends the rest again with the same offsets.
 */
export class AppendPipeline {
  private readonly queue = new AppendQueue();
  private driving = false;
  private rolloverRequested = false;
  /**
   * Appends were failed as in doubt (APPEND_OUTCOME_UNKNOWN) and the ledger
   * they were written to is not checked yet: until it is, an entry of theirs
   * may be in the store without anyone knowing.
   */
  private abandonedInDoubt = false;
  private readonly idleWaiters: (() => void)[] = [];
  /** settle() calls waiting for the failed ledger to be checked, or for the loop to stop trying. */
  private readonly settleWaiters: (() => void)[] = [];

  constructor(private readonly host: AppendHost) {}

  get pendingAppends(): number {
    return this.queue.length;
  }

  get pendingBytes(): number {
    return this.queue.bytes;
  }

  get appendsInDoubt(): boolean {
    return this.abandonedInDoubt;
  }

  /**
   * Learns the outcome of appends failed as in doubt: the ledger they were
   * written to is checked (what landed reaches entriesAdopted before this
   * resolves). Rejects when the store cannot tell yet.
   */
  async settle(): Promise<void> {
    if (!this.abandonedInDoubt) return;
    const blocker = this.host.submitBlocker();
    if (blocker !== undefined) throw blocker;
    // The loop checks a failed ledger before anything else, and rolls to a new one after. Not whenIdle: under
    // steady appends the loop may not be idle for long, and the check is all a waiting publish needs.
    const checked = new Promise<void>((resolve) => this.settleWaiters.push(resolve));
    this.requestRollover();
    await checked;
    if (!this.abandonedInDoubt) return;
    throw (
      this.host.writeBlocker() ??
      new LedgerlineError(
        'UNAVAILABLE',
        ManagedLedgerReason.LEDGER_WRITE_FAILED,
        `managed ledger ${this.host.name} could not yet learn whether earlier appends were stored; the append may be retried`,
      )
    );
  }

  submit(payload: Uint8Array, numMessages: number): Promise<AppendResult> {
    const { config } = this.host;
    try {
      checkAppendArguments(payload, numMessages, config.maxEntrySizeBytes);
    } catch (err) {
      return Promise.reject(err);
    }
    const blocker = this.host.submitBlocker();
    if (blocker !== undefined) return Promise.reject(blocker);
    if (
      this.queue.length >= config.maxPendingAppends ||
      this.queue.bytes + payload.byteLength > config.maxPendingAppendBytes
    ) {
      return Promise.reject(
        new LedgerlineError(
          'RESOURCE_EXHAUSTED',
          ManagedLedgerReason.TOO_MANY_PENDING_APPENDS,
          `managed ledger ${this.host.name} has ${this.queue.length} appends (${this.queue.bytes} bytes) pending; ` +
            `the limits are maxPendingAppends ${config.maxPendingAppends} and maxPendingAppendBytes ${config.maxPendingAppendBytes}`,
        ),
      );
    }
    return new Promise<AppendResult>((resolve, reject) => {
      this.queue.push({ payload, numMessages, resolve, reject });
      this.kick();
    });
  }

  /** Asks the loop to roll the ledger over even without appends (rollover by age). */
  requestRollover(): void {
    this.rolloverRequested = true;
    this.kick();
  }

  /**
   * Stops the pipeline for good (another owner, delete): appends not yet sent
   * fail now; one being written, or whose write is in doubt, is settled by the
   * loop first, so an append that reached the store is never reported failed.
   */
  stop(err: Error): void {
    if (this.driving) return;
    this.rejectAll(err);
  }

  /**
   * Fails every queued append with `err`, or with `inDoubt` those already
   * sent (their write may have landed in a ledger that could not be checked).
   */
  rejectAll(err: Error, inDoubt?: Error): void {
    for (const op of this.queue.drain()) {
      const doubtful = inDoubt !== undefined && op.offsets !== undefined;
      if (doubtful) this.abandonedInDoubt = true;
      op.reject(doubtful ? inDoubt : err);
    }
    // The offsets of the failed appends are free again; an entry of theirs that did land is found when the ledger is checked.
    this.host.assigner.recover(undefined, { lastOffset: this.host.assigner.committedEnd });
  }

  /** Resolves once nothing is queued and the loop is idle. */
  whenIdle(): Promise<void> {
    if (!this.driving) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private kick(): void {
    if (this.driving) return;
    this.driving = true;
    this.drive()
      .finally(() => {
        this.driving = false;
        for (const waiter of [...this.idleWaiters.splice(0), ...this.settleWaiters.splice(0)]) waiter();
        if (this.queue.length > 0 && this.host.writeBlocker() === undefined) this.kick();
      })
      .catch(unexpectedRejection);
  }

  private async drive(): Promise<void> {
    const { config } = this.host;
    while (this.queue.length > 0 || this.rolloverRequested) {
      // Group commit: before a write that has room for more entries, let the event loop run once, so
      // appends whose requests already sit in socket buffers join it. Without this a store that answers
      // at once (SQLite is synchronous) would take one transaction, and one fsync, per entry.
      if (this.queue.length > 0 && this.queue.length < config.maxWriteBatchEntries) await nextTurn();
      try {
        // A step that fails is tried again after a growing pause; one that succeeds starts the count afresh.
        await backOff(() => this.stepUnlessBlocked(), {
          numOfAttempts: config.writeRetryMaxAttempts,
          startingDelay: config.writeRetryInitialBackoffMs,
          maxDelay: config.writeRetryMaxBackoffMs,
          timeMultiple: 2,
          jitter: 'none',
          retry: (err: unknown) => this.worthRetrying(err),
        });
      } catch (err) {
        await this.giveUp(err);
        return;
      }
    }
  }

  /** A step, unless the loop must stop (fenced, closed) or nothing is left to do after a pause. */
  private async stepUnlessBlocked(): Promise<void> {
    const blocker = this.host.writeBlocker();
    if (blocker !== undefined) throw new WriteBlocked(blocker);
    if (this.queue.length === 0 && !this.rolloverRequested) return;
    await this.step();
  }

  /** One unit of progress: check a failed ledger, roll over, or write a batch. */
  private async step(): Promise<void> {
    const ledger = this.host.currentLedger();
    if (ledger !== undefined && ledger.writeFailed && !ledger.sealed) {
      await this.recoverFailedLedger(ledger);
    } else if (ledger === undefined || ledger.sealed || this.host.rolloverDue(ledger) || this.rolloverRequested) {
      if (
        ledger !== undefined &&
        ledger.entries === 0 &&
        !ledger.sealed &&
        this.rolloverRequested &&
        this.queue.length === 0
      ) {
        this.rolloverRequested = false;
        return;
      }
      await this.host.rollover();
      this.rolloverRequested = false;
    } else if (this.queue.length > 0) {
      await this.writeBatch(ledger);
    }
  }

  /**
   * Fails everything queued because the loop must stop for good. Appends of a
   * failed write are first looked up: the ledger is fenced (by us or the new
   * owner), so what it holds is final and the new owner serves exactly that;
   * those that landed are acknowledged, the rest fail with `err`. If the
   * store cannot tell, the sent ones fail as in doubt (APPEND_OUTCOME_UNKNOWN),
   * never with a reason that says they are not in the log.
   */
  private async failSettled(err: LedgerlineError): Promise<void> {
    const ledger = this.host.currentLedger();
    if (ledger !== undefined && this.inDoubt(ledger)) {
      await this.recoverFailedLedger(ledger).catch((cause: unknown) =>
        this.host.logWarning('could not learn whether failed appends landed', {
          managedLedger: this.host.name,
          error: String(cause),
        }),
      );
    }
    this.rolloverRequested = false;
    const unsettled = ledger !== undefined && this.inDoubt(ledger);
    this.rejectAll(err, unsettled ? appendOutcomeUnknownError(this.host.name, err) : undefined);
  }

  /** True while appends were sent to a ledger whose failed write has not been checked yet. */
  private inDoubt(ledger: OpenLedger): boolean {
    return ledger.writeFailed && !ledger.sealed && this.queue.first()?.offsets !== undefined;
  }

  /** Whether a failed step is worth another try; also tells the offset assigner about the failure. */
  private worthRetrying(err: unknown): boolean {
    if (err instanceof WriteBlocked) return false;
    const error = LedgerlineError.from(err);
    if (isFencing(error)) return false;
    const offsets = this.queue.first()?.offsets;
    const verdict = offsets === undefined ? 'retry' : this.host.assigner.fail(offsets);
    return verdict !== 'recover' && isRetryable(error);
  }

  /** Ends the loop after a step that will not be tried again. */
  private async giveUp(err: unknown): Promise<void> {
    if (err instanceof WriteBlocked) {
      await this.failSettled(err.blocker);
      return;
    }
    const error = LedgerlineError.from(err);
    if (isFencing(error)) {
      this.host.fence(error);
      await this.failSettled(error);
      return;
    }
    this.host.logWarning('appends failed after retries', { managedLedger: this.host.name, error: error.toString() });
    this.rolloverRequested = false;
    // The appends of a write that failed without an answer may be in the store: saying they may be retried would
    // invite a second copy. Their ledger is checked before the next write, which finds what landed.
    const ledger = this.host.currentLedger();
    const failure = writeFailed(this.host.name, error);
    const unsettled = ledger !== undefined && this.inDoubt(ledger);
    this.rejectAll(failure, unsettled ? appendOutcomeUnknownError(this.host.name, failure) : undefined);
  }

  private async writeBatch(ledger: OpenLedger): Promise<void> {
    const { config } = this.host;
    // A batch never takes the ledger past maxEntriesPerLedger, so rollover lands where configured. A ledger
    // already there is too young to roll over (minLedgerAgeMs): it takes whole batches until it may, as
    // one entry per write would cut throughput to one store round trip per entry.
    const room =
      ledger.entries < config.maxEntriesPerLedger
        ? config.maxEntriesPerLedger - ledger.entries
        : Number.MAX_SAFE_INTEGER;
    const batch = this.queue.peekBatch(Math.min(config.maxWriteBatchEntries, room), config.maxWriteBatchBytes);
    for (const op of batch) this.frame(op);
    let firstEntryId: number;
    try {
      firstEntryId = await ledger.writer.append(batch.map((op) => op.framed as Uint8Array));
    } catch (err) {
      if (isLedgerFenced(err)) throw ledgerFencedError(this.host.name, err);
      ledger.writeFailed = true;
      throw err;
    }
    this.confirmOps(ledger, batch, firstEntryId);
  }

  /** Fixes offsets, broker time and bytes the first time an op is sent. */
  private frame(op: AppendOp): void {
    if (op.framed !== undefined) return;
    op.offsets = this.host.assigner.assign(op.numMessages);
    op.brokerTimestampMs = this.host.now();
    op.framed = encodeEntry({ brokerTimestamp: op.brokerTimestampMs, index: op.offsets.index }, op.payload);
  }

  private confirmOps(ledger: OpenLedger, ops: AppendOp[], firstEntryId: number): void {
    if (firstEntryId !== ledger.entries) {
      throw new LedgerlineError(
        'INTERNAL',
        ManagedLedgerReason.LEDGER_ENTRY_IDS_DIVERGED,
        `ledger ${ledger.ledgerId} stored our write at entry ${firstEntryId}, but we confirmed ${ledger.entries} entries`,
      );
    }
    const entries = ops.map((op, i) => this.confirmOne(ledger, op, firstEntryId + i));
    this.queue.shift(ops.length);
    this.host.entriesConfirmed(ledger, entries);
    ops.forEach((op, i) => {
      const entry = entries[i] as ManagedLedgerEntry;
      op.resolve({ position: entry.position, firstOffset: entry.firstOffset, lastOffset: entry.lastOffset });
    });
  }

  private confirmOne(ledger: OpenLedger, op: AppendOp, entryId: number): ManagedLedgerEntry {
    const offsets = op.offsets!;
    ledger.confirm(offsets.index, op.brokerTimestampMs!, op.framed!.byteLength);
    this.host.assigner.acknowledge(offsets);
    return {
      position: { ledgerId: ledger.ledgerId, entryId },
      payload: op.payload,
      firstOffset: offsets.firstOffset,
      lastOffset: offsets.index,
      numMessages: offsets.batchSize,
      brokerTimestampMs: op.brokerTimestampMs!,
    };
  }

  /**
   * After a failed write the entries may or may not be in the store. Fencing
   * our own ledger freezes it; every entry past what we confirmed is read back:
   * one of ours (matched by offset) is acknowledged, one whose append already
   * failed to its caller (in doubt) is kept as written (its offsets are taken)
   * and reported as adopted, so its producer's resend is known for a
   * duplicate. Then the ledger is sealed and the loop rolls to a new one.
   */
  private async recoverFailedLedger(ledger: OpenLedger): Promise<void> {
    const lastAddConfirmed = await this.host.sealLedger(ledger.ledgerId);
    let orphanMetadata: { brokerTimestamp: number; index: number } | undefined;
    while (ledger.lastEntryId < lastAddConfirmed) {
      const first = ledger.entries;
      const last = Math.min(lastAddConfirmed, first + READ_BACK_PAGE - 1);
      for (const stored of await this.host.readLedger(ledger.ledgerId, first, last)) {
        orphanMetadata = this.adoptLandedEntry(ledger, stored) ?? orphanMetadata;
      }
    }
    if (orphanMetadata !== undefined) this.host.assigner.recover(orphanMetadata, {});
    ledger.sealed = true;
    this.abandonedInDoubt = false;
    for (const waiter of this.settleWaiters.splice(0)) waiter();
    // Roll right away, as Pulsar does after a failed write, so the topic is writable again.
    this.rolloverRequested = true;
  }

  /** Acknowledges the head op if `stored` is it; returns the metadata of an entry no op is waiting for. */
  private adoptLandedEntry(
    ledger: OpenLedger,
    stored: LedgerEntry,
  ): { brokerTimestamp: number; index: number } | undefined {
    const { metadata, payload } = decodeEntry(stored.data);
    if (metadata?.index === undefined || metadata.brokerTimestamp === undefined) {
      throw new LedgerlineError(
        'DATA_LOSS',
        ManagedLedgerReason.ENTRY_METADATA_MISSING,
        `entry ${stored.entryId} of our ledger has no offset`,
      );
    }
    const head = this.queue.first();
    if (head?.offsets !== undefined && head.offsets.index === metadata.index) {
      this.confirmOps(ledger, [head], stored.entryId);
      return undefined;
    }
    if (head?.offsets !== undefined || metadata.index <= ledger.lastOffset) {
      throw new LedgerlineError(
        'INTERNAL',
        ManagedLedgerReason.LEDGER_ENTRY_IDS_DIVERGED,
        `entry ${stored.entryId} of ledger ${ledger.ledgerId} has offset ${metadata.index}, which no pending append holds`,
      );
    }
    const firstOffset = ledger.lastOffset + 1;
    ledger.confirm(metadata.index, metadata.brokerTimestamp, stored.data.byteLength);
    const adopted: ManagedLedgerEntry = {
      position: { ledgerId: ledger.ledgerId, entryId: stored.entryId },
      payload,
      firstOffset,
      lastOffset: metadata.index,
      numMessages: metadata.index - firstOffset + 1,
      brokerTimestampMs: metadata.brokerTimestamp,
    };
    this.host.entriesConfirmed(ledger, [adopted]);
    this.host.entriesAdopted([adopted]);
    return { brokerTimestamp: metadata.brokerTimestamp, index: metadata.index };
  }
}

export function checkAppendArguments(payload: unknown, numMessages: unknown, maxEntrySizeBytes: number): void {
  if (!(payload instanceof Uint8Array)) {
    throw invalidArgument(ManagedLedgerReason.INVALID_PAYLOAD, 'the payload must be a Uint8Array');
  }
  if (
    typeof numMessages !== 'number' ||
    !Number.isSafeInteger(numMessages) ||
    numMessages < 1 ||
    numMessages > MAX_BATCH_SIZE
  ) {
    throw invalidArgument(
      ManagedLedgerReason.INVALID_NUM_MESSAGES,
      `numMessages must be an integer from 1 to ${MAX_BATCH_SIZE}`,
    );
  }
  if (payload.byteLength + MAX_FRAMING_BYTES > maxEntrySizeBytes) {
    throw new LedgerlineError(
      'INVALID_ARGUMENT',
      LedgerStoreReason.ENTRY_TOO_LARGE,
      `the payload has ${payload.byteLength} bytes; with framing an entry may have at most ${maxEntrySizeBytes} (maxEntrySizeBytes)`,
    );
  }
}

function isRetryable(err: LedgerlineError): boolean {
  return err.retryable || err.code === 'UNKNOWN' || err.code === 'ABORTED' || err.code === 'FAILED_PRECONDITION';
}

function writeFailed(name: string, cause: LedgerlineError): LedgerlineError {
  return new LedgerlineError(
    'UNAVAILABLE',
    ManagedLedgerReason.LEDGER_WRITE_FAILED,
    `managed ledger ${name} could not write to the ledger store (${cause.reason}: ${cause.message}); the append may be retried`,
    { cause },
  );
}

/** Why the loop stopped: the host refuses writes (fenced, closed); queued appends fail with the blocker. */
class WriteBlocked extends Error {
  constructor(readonly blocker: LedgerlineError) {
    super(blocker.message);
  }
}
