import { LedgerlineError } from '@ledgerline/errors';
import { messageCount } from '@ledgerline/message-format';
import type { AppendListener, AppendResult, ManagedLedger } from '@ledgerline/managed-ledger';
import type { ByteBudget } from './byte-budget.js';
import type { DedupRange, Deduplication } from './deduplication.js';
import { sequenceGap } from './errors.js';
import type { InFlight } from './in-flight.js';
import { appendOptions, prepareEntry } from './prepared-entry.js';
import { ProducerRun } from './producer-run.js';
import { receiptOf, storedReceiptOf, type Receipt } from './receipts.js';
import { TraceStage, type StageTrace } from './stage-trace.js';
import type { TopicBatch } from './topic-batch.js';

/** What the queue needs from its topic (OwnedTopic). */
export interface PublishQueueHost {
  readonly ledger: ManagedLedger;
  readonly dedup: Deduplication;
  /** Bytes and entries admitted and not yet answered by the store. */
  readonly budget: ByteBudget;
  readonly entryBudget: ByteBudget;
  /** Entries handed to the ledger and not settled: a transfer waits for them. */
  readonly inFlight: InFlight;
  readonly maxMessageSizeBytes: number;
  now(): number;
  /** Throws why the topic refuses entries (unloaded); returns what to wait for while a transfer runs. */
  gate(): Promise<void> | undefined;
  /** What a producer is told of a failed append (an ownership lost also unloads the topic). */
  appendFailure(error: LedgerlineError): LedgerlineError;
  /** One store write's entries are stored: `messages` messages in `bytes` bytes, the last one at `last`. */
  stored(messages: number, bytes: number, last: AppendResult): void;
  /** An entry was answered as a duplicate. */
  duplicateAnswered(): void;
  /** The per-stage latency trace, when on. */
  readonly trace?: StageTrace | undefined;
}

/** An append that settled, waiting for the end of the store write that settled it. */
interface Settled {
  batch: TopicBatch;
  index: number;
  result: AppendResult | undefined;
  error: unknown;
}

/**
 * A topic's one ordering point: batches enter in the turn their stream read
 * them, and their entries leave in that order, synchronously whenever the
 * topic's budgets have room: the stream's fence and appends in doubt are
 * checked, deduplication decides (one pass per batch), and the new entries
 * are handed to the managed ledger in the same run. Nothing behind an entry
 * that waits (for its budget, a transfer, appends in doubt being checked)
 * overtakes it. The managed ledger's call-number check stays as the store's
 * guard. Appends settle in the reactions of one store write; what they tell
 * deduplication, the budgets and the counters is recorded once for the whole
 * write, after them.
 */
export class PublishQueue {
  private readonly batches: TopicBatch[] = [];
  private pumping = false;
  /** A wait for the head batch is under way (budget, transfer, in-doubt check): its end pumps again. */
  private waiting = false;
  /** Batches with entries handed to the ledger and not answered: an ownership lost answers them at once. */
  private readonly owed = new Set<TopicBatch>();
  private settled: Settled[] = [];
  private flushScheduled = false;

  constructor(private readonly host: PublishQueueHost) {}

  /** Takes `batch` in, behind every batch before it, and admits what can go now. */
  enqueue(batch: TopicBatch): void {
    this.prepare(batch);
    this.batches.push(batch);
    this.pump();
  }

  /** Answers every entry handed to the ledger and not yet answered with `error` (the ownership is lost). */
  failOwed(error: LedgerlineError): void {
    for (const batch of this.owed) {
      for (let index = 0; index < batch.size; index++) if (batch.isOwed(index)) batch.refuse(index, error);
    }
    this.owed.clear();
  }

  /** Encodes each entry in the stored layout; one that cannot be stored is refused alone. */
  private prepare(batch: TopicBatch): void {
    const now = this.host.now();
    for (let index = 0; index < batch.size; index++) {
      try {
        const message = batch.messages[index]!;
        batch.bytes[index] = prepareEntry(message, now, this.host.maxMessageSizeBytes);
        batch.numMessages[index] = messageCount(message);
      } catch (error) {
        batch.refuse(index, error);
      }
    }
  }

  /** Admits batches from the head while nothing makes the head wait; the end of a wait pumps again. */
  pump(): void {
    if (this.pumping || this.waiting) return;
    this.pumping = true;
    try {
      while (this.batches.length > 0 && this.admit(this.batches[0]!)) this.batches.shift();
    } finally {
      this.pumping = false;
    }
  }

  /** Admits what it can of `batch`; true once every entry was handed over or answered. */
  private admit(batch: TopicBatch): boolean {
    let gate: Promise<void> | undefined;
    try {
      gate = this.host.gate();
    } catch (unloaded) {
      this.refuseRest(batch, unloaded);
      return true;
    }
    if (gate !== undefined) return this.waitFor(gate);
    if (batch.signal?.aborted === true) {
      this.refuseRest(batch, batch.signal.reason);
      return true;
    }
    // An append failed as in doubt may be in the log: no id is new until the ledger is checked.
    if (batch.inDoubtFailure === undefined && this.host.ledger.appendsInDoubt && hasProducer(batch)) {
      return this.waitFor(this.host.ledger.settleAppends(), (thrown) => {
        batch.inDoubtFailure = this.host.appendFailure(LedgerlineError.from(thrown));
      });
    }
    while (batch.next < batch.size) {
      const to = this.takeBudgets(batch);
      if (to === undefined) return false;
      this.admitRange(batch, batch.next, to);
      batch.next = to;
    }
    return true;
  }

  private refuseRest(batch: TopicBatch, thrown: unknown): void {
    if (batch.headBudgeted) {
      batch.headBudgeted = false;
      this.release(batch, batch.next);
    }
    batch.refuseRest(thrown);
  }

  /** Waits for `until`, then pumps again (after `onRejected` when it rejects); false, for admit to return. */
  private waitFor(until: Promise<unknown>, onRejected?: (thrown: unknown) => void): false {
    this.waiting = true;
    until.then(
      () => {
        this.waiting = false;
        this.pump();
      },
      (thrown: unknown) => {
        this.waiting = false;
        onRejected?.(thrown);
        this.pump();
      },
    );
    return false;
  }

  /**
   * Takes the topic's budgets for entries from `batch.next` on, as many as have room (all of them in one
   * step when they fit within the bounds), and returns where they end; undefined when the first must wait.
   */
  private takeBudgets(batch: TopicBatch): number | undefined {
    const { budget, entryBudget } = this.host;
    let index = batch.next;
    if (batch.headBudgeted) {
      batch.headBudgeted = false;
      index++;
    } else {
      let bytes = 0;
      let entries = 0;
      for (let rest = index; rest < batch.size; rest++) {
        if (batch.isAnswered(rest)) continue;
        bytes += batch.bytes[rest]!.length;
        entries++;
      }
      if (budget.canAcquire(bytes, true) && entryBudget.canAcquire(entries, true)) {
        budget.take(bytes);
        entryBudget.take(entries);
        return batch.size;
      }
    }
    for (; index < batch.size; index++) {
      if (batch.isAnswered(index)) continue;
      const bytes = batch.bytes[index]!.length;
      if (!budget.canAcquire(bytes) || !entryBudget.canAcquire(1)) break;
      budget.take(bytes);
      entryBudget.take(1);
    }
    if (index > batch.next) return index;
    this.waitForBudget(batch, index);
    return undefined;
  }

  /** The entry at `index` waits for its bytes, then its entry slot, alone: nothing behind it goes first. */
  private waitForBudget(batch: TopicBatch, index: number): void {
    const { budget, entryBudget } = this.host;
    const bytes = batch.bytes[index]!.length;
    const gotBytes = budget.acquire(bytes, batch.signal) ?? Promise.resolve();
    const gotBoth = gotBytes.then(() =>
      entryBudget.acquire(1, batch.signal)?.catch((thrown: unknown) => {
        budget.release(bytes);
        throw thrown;
      }),
    );
    this.waitFor(
      gotBoth.then(() => (batch.headBudgeted = true)),
      (thrown) => batch.refuse(index, thrown),
    );
  }

  /** Gives back the budgets entry `index` of `batch` holds. */
  private release(batch: TopicBatch, index: number): void {
    this.host.budget.release(batch.bytes[index]!.length);
    this.host.entryBudget.release(1);
  }

  /**
   * Admits entries `from` to `to` of `batch`, whose budgets are taken: refused when they would overtake an
   * entry of their producer the stream's fence holds, or when appends in doubt could not be checked; then
   * deduplication decides, in one pass, and the new ones go to the ledger. The rest give their budgets back.
   */
  private admitRange(batch: TopicBatch, from: number, to: number): void {
    if (batch.fence.active || batch.inDoubtFailure !== undefined) {
      for (let index = from; index < to; index++) {
        if (batch.isAnswered(index)) continue;
        const message = batch.messages[index]!;
        const refusal =
          batch.fence.overtaking(message) ?? (message.producerName === '' ? undefined : batch.inDoubtFailure);
        if (refusal === undefined) continue;
        this.release(batch, index);
        batch.refuse(index, refusal);
      }
    }
    let appended = 0;
    for (const range of this.host.dedup.check(batch, from, to)) {
      for (let index = range.from; index < range.to; index++) {
        if (batch.isAnswered(index)) continue;
        if (range.kind === 'new') {
          this.append(batch, index);
          appended++;
          continue;
        }
        this.release(batch, index);
        this.answerOld(batch, index, range);
      }
    }
    if (appended === 0) return;
    const { trace } = this.host;
    if (trace !== undefined && batch.times.appendedMs === 0) {
      batch.times.appendedMs = performance.now();
      trace.record(TraceStage.READ_TO_APPENDED, batch.times.appendedMs - batch.times.readMs);
    }
    this.host.inFlight.add(appended);
    this.owed.add(batch);
  }

  /** Answers an entry deduplication did not let through: a duplicate, now or once its original settles, or a gap. */
  private answerOld(batch: TopicBatch, index: number, range: DedupRange): void {
    const message = batch.messages[index]!;
    const sequenceId = message.sequenceId;
    if (range.kind === 'duplicate') {
      const original = range.receipt?.sequenceId === sequenceId ? range.receipt : undefined;
      this.host.duplicateAnswered();
      batch.answer(index, receiptOf(original, sequenceId, true));
    } else if (range.kind === 'gap') {
      batch.refuse(index, sequenceGap(message.producerName, sequenceId, range.resendFrom));
    } else {
      const original = this.host.dedup.inFlight(message.producerName, sequenceId);
      // Deduplication found it in flight a moment ago, in this same run: only a broken invariant gets here.
      if (original === undefined) batch.refuse(index, sequenceGap(message.producerName, sequenceId, sequenceId));
      else original.batch.whenAnswered(original.index, () => this.answerLike(batch, index, original));
    }
  }

  /** Answers a duplicate of an entry that was in flight with that entry's outcome. */
  private answerLike(batch: TopicBatch, index: number, original: { batch: TopicBatch; index: number }): void {
    const stored = original.batch.receipts[original.index];
    if (stored === undefined) {
      batch.refuse(index, original.batch.failures[original.index]);
      return;
    }
    const sequenceId = batch.messages[index]!.sequenceId;
    this.host.duplicateAnswered();
    batch.answer(index, duplicateOf(stored, sequenceId));
  }

  private append(batch: TopicBatch, index: number): void {
    batch.markAppended(index);
    batch.inStore++;
    const options = appendOptions(batch.messages[index]!);
    // Told with the batch and the index: no promise and no closures per entry.
    this.host.ledger.appendWith(batch.bytes[index]!, batch.numMessages[index]!, options, this.listener, batch, index);
  }

  private readonly listener: AppendListener<TopicBatch> = {
    appended: (batch, index, result) => this.onSettled(batch, index, result, undefined),
    failed: (batch, index, error) => this.onSettled(batch, index, undefined, error),
  };

  private onSettled(batch: TopicBatch, index: number, result: AppendResult | undefined, error: unknown): void {
    this.settled.push({ batch, index, result, error });
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // The managed ledger settles a store write's appends in one synchronous run, so a microtask queued from
    // the first runs after the last, and the write is recorded once.
    queueMicrotask(() => this.flush());
  }

  /** Records one store write's settled appends: deduplication per producer, budgets, counters, answers. */
  private flush(): void {
    const settled = this.settled;
    this.settled = [];
    this.flushScheduled = false;
    const publishTimeMs = this.host.now();
    const run = new ProducerRun(this.host.dedup, publishTimeMs);
    let bytes = 0;
    let storedMessages = 0;
    let storedBytes = 0;
    let last: AppendResult | undefined;
    for (const { batch, index, result, error } of settled) {
      const message = batch.messages[index]!;
      const size = batch.bytes[index]!.length;
      bytes += size;
      if (--batch.inStore === 0) this.owed.delete(batch);
      if (result === undefined) {
        run.commit();
        if (message.producerName !== '') this.host.dedup.failed(message.producerName, message.sequenceId);
        batch.refuse(index, this.host.appendFailure(LedgerlineError.from(error)));
        continue;
      }
      if (message.producerName !== '') run.add(message.producerName, batch.highest(index), message.sequenceId, result);
      storedMessages += batch.numMessages[index]!;
      storedBytes += size;
      last = result;
      batch.answer(index, storedReceiptOf(result, publishTimeMs, message.sequenceId));
    }
    run.commit();
    if (this.host.trace !== undefined) traceStored(this.host.trace, settled);
    if (last !== undefined) this.host.stored(storedMessages, storedBytes, last);
    this.host.budget.release(bytes);
    this.host.entryBudget.release(settled.length);
    this.host.inFlight.done(settled.length);
    this.pump();
  }
}

/** Times a store write's settled appends: appended to stored, and each entry's stored time for its dispatch. */
function traceStored(trace: StageTrace, settled: readonly Settled[]): void {
  const nowMs = performance.now();
  for (const { batch, result } of settled) {
    batch.times.storedMs = nowMs;
    if (result === undefined) continue;
    trace.record(TraceStage.APPENDED_TO_STORED, nowMs - batch.times.appendedMs);
    trace.stored(result.position.ledgerId, result.position.entryId, nowMs);
  }
}

function hasProducer(batch: TopicBatch): boolean {
  for (let index = batch.next; index < batch.size; index++) {
    if (batch.messages[index]!.producerName !== '' && !batch.isAnswered(index)) return true;
  }
  return false;
}

/** The receipt of a duplicate of `stored`'s entry: its place when it is the same first id, none (-1) otherwise. */
function duplicateOf(stored: Receipt, sequenceId: bigint): Receipt {
  if (stored.sequenceId !== sequenceId) return receiptOf(undefined, sequenceId, true);
  return {
    sequenceId,
    position: stored.position,
    firstOffset: stored.firstOffset,
    lastOffset: stored.lastOffset,
    duplicate: true,
    publishTimeMs: stored.publishTimeMs,
  };
}
