import { backOff } from 'exponential-backoff';
import { LedgerlineError, unexpectedRejection } from '@ledgerline/errors';
import { checkAppendArguments, pendingLimitError } from './append-admission.js';
import { confirmOps, frameOp } from './append-completion.js';
import { isRetryable, readBackFailedLedger, writeFailed, WriteBlocked, type ReadBackHost } from './append-failures.js';
import { AppendQueue, type AppendOp } from './append-queue.js';
import { sharedNextTurn } from './shared-turn.js';
import type { ManagedLedgerConfig } from '../config.js';
import type { AppendTrace } from '../context.js';
import type { AppendListener, AppendOptions, AppendResult } from '../entry.js';
import {
  appendOutcomeUnknownError,
  isFencing,
  isLedgerFenced,
  ledgerFencedError,
  ManagedLedgerReason,
} from '../errors.js';
import type { OpenLedger } from '../ledgers/open-ledger.js';

/**
 * What the pipeline needs from the managed ledger that owns it; completion
 * and read-back use parts of it (CompletionHost, ReadBackHost).
 */
export interface AppendHost extends ReadBackHost {
  readonly name: string;
  readonly config: ManagedLedgerConfig;
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
  /** Another owner took the topic: the host fails everything and refuses appends from now on. */
  fence(err: LedgerlineError): void;
  logWarning(message: string, details: Record<string, unknown>): void;
  /** Told the time of each turn wait and store write, when a latency trace is on. */
  readonly trace?: AppendTrace | undefined;
}

/**
 * The write side of a managed ledger: appends are queued, written in order
 * by one loop in batches (group commit: one store write in flight, so the
 * store can never reorder two of our writes; the loop lets the event loop
 * turn once before the first write after an idle spell, so appends already
 * received join it, and later ones gather while the write before them is
 * under way; a failed write fails or retries all of them together), and
 * acknowledged in order once the store holds them. A failed write seals the ledger, learns from the
 * store which entries landed (they are acknowledged, never written twice),
 * rolls to a new ledger and sends the rest again with the same offsets.
 * What an append must satisfy to be queued is in append-admission.ts, its
 * completion in append-completion.ts, the read-back of a failed write in
 * append-failures.ts.
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

  submit(payload: Uint8Array, numMessages: number, options?: AppendOptions): Promise<AppendResult> {
    return new Promise<AppendResult>((resolve, reject) =>
      this.submitWith(payload, numMessages, options, SETTLE_PROMISE, { resolve, reject }, 0),
    );
  }

  /**
   * Queues an append whose outcome `listener` is told, with `token` and `index`; a refused one is told
   * in a microtask, as a promise's rejection would be.
   */
  submitWith<T>(
    payload: Uint8Array,
    numMessages: number,
    options: AppendOptions | undefined,
    listener: AppendListener<T>,
    token: T,
    index: number,
  ): void {
    const { config } = this.host;
    let refusal: unknown;
    try {
      checkAppendArguments(payload, numMessages, config.maxEntrySizeBytes, options);
      refusal = this.host.submitBlocker() ?? pendingLimitError(this.host.name, this.queue, payload.byteLength, config);
    } catch (err) {
      refusal = err;
    }
    if (refusal !== undefined) {
      queueMicrotask(() => listener.failed(token, index, refusal as Error));
      return;
    }
    const maxEventTimeMs = options?.maxEventTimeMs;
    const op: AppendOp = { payload, numMessages, listener: listener as AppendListener<unknown>, token, index };
    if (maxEventTimeMs !== undefined) op.maxEventTimeMs = maxEventTimeMs;
    this.queue.push(op);
    this.kick();
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
      op.listener.failed(op.token, op.index, doubtful ? inDoubt : err);
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
    let gathered = false;
    while (this.queue.length > 0 || this.rolloverRequested) {
      // Group commit: before the first write after an idle spell, if it has room for more entries, let the
      // event loop run once, so appends whose requests already sit in socket buffers join it. Without this a
      // store that answers at once (SQLite in memory) would take one transaction, and one fsync, per entry.
      // The turn is shared with every other managed ledger, so the writes of all that are ready go out
      // together. A write that follows one under way goes at once: what arrived meanwhile had that write's
      // time to gather, and a turn more only delayed it (at 10,000 msg/s the wait's p99 was 6 to 15 ms).
      if (!gathered && this.queue.length > 0 && this.queue.length < config.maxWriteBatchEntries) {
        await this.nextTurn();
      }
      gathered = true;
      try {
        await this.stepWithRetries();
      } catch (err) {
        await this.giveUp(err);
        return;
      }
    }
  }

  /** The shared turn, its wait told to the trace when one is on. */
  private async nextTurn(): Promise<void> {
    const { trace } = this.host;
    if (trace === undefined) return sharedNextTurn();
    const startedMs = performance.now();
    await sharedNextTurn();
    trace.turnWaited(performance.now() - startedMs);
  }

  /**
   * A step, tried again after a growing pause while it fails in a way worth another try; one that succeeds starts
   * the count afresh. The first try goes without the retry machinery: nearly every step succeeds at once, and
   * building a backoff for each one cost the write loop more than some of the writes it drove.
   */
  private async stepWithRetries(): Promise<void> {
    const { config } = this.host;
    try {
      await this.stepUnlessBlocked();
      return;
    } catch (err) {
      // Asked for every failed try, the last included, as it also tells the offset assigner of the failure.
      if (!this.worthRetrying(err) || config.writeRetryMaxAttempts <= 1) throw err;
    }
    // The tries after the first, each after a pause: initial, then doubled, up to the maximum.
    await backOff(() => this.stepUnlessBlocked(), {
      numOfAttempts: config.writeRetryMaxAttempts - 1,
      startingDelay: config.writeRetryInitialBackoffMs,
      maxDelay: config.writeRetryMaxBackoffMs,
      timeMultiple: 2,
      jitter: 'none',
      delayFirstAttempt: true,
      retry: (err: unknown) => this.worthRetrying(err),
    });
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
    for (const op of batch) frameOp(op, this.host);
    let firstEntryId: number;
    const sentMs = this.host.trace === undefined ? 0 : performance.now();
    try {
      firstEntryId = await ledger.writer.append(batch.map((op) => op.framed as Uint8Array));
      this.host.trace?.written(performance.now() - sentMs, batch.length);
    } catch (err) {
      if (isLedgerFenced(err)) throw ledgerFencedError(this.host.name, err);
      ledger.writeFailed = true;
      throw err;
    }
    confirmOps(this.host, this.queue, ledger, batch, firstEntryId);
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
    await readBackFailedLedger(this.host, this.queue, ledger, lastAddConfirmed);
    ledger.sealed = true;
    this.abandonedInDoubt = false;
    for (const waiter of this.settleWaiters.splice(0)) waiter();
    // Roll right away, as Pulsar does after a failed write, so the topic is writable again.
    this.rolloverRequested = true;
  }
}

/** A promise's resolvers, as the token of an append made through submit. */
interface Resolvers {
  resolve(result: AppendResult): void;
  reject(error: Error): void;
}

const SETTLE_PROMISE: AppendListener<Resolvers> = {
  appended: (resolvers, _index, result) => resolvers.resolve(result),
  failed: (resolvers, _index, error) => resolvers.reject(error),
};
