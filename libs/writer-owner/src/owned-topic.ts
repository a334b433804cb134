import type { Counter } from 'prom-client';
import { LedgerlineError } from '@ledgerline/errors';
import type { AppendResult, ManagedLedger } from '@ledgerline/managed-ledger';
import { topicUnloaded } from '@ledgerline/ownership';
import type { PublishMessage } from '@ledgerline/proto';
import { ByteBudget } from './byte-budget.js';
import type { DedupVerdict, Deduplication, StoredReceipt } from './deduplication.js';
import { isClosed, isOwnershipLost, sequenceGap } from './errors.js';
import { InFlight } from './in-flight.js';
import type { LacNotifier } from './lac-notifier.js';
import type { WriterMetrics } from './metrics.js';
import { RateMeter } from './rate-meter.js';
import { prepareEntry } from './prepared-entry.js';
import { receiptOf, storedReceipt, type Receipt } from './receipts.js';

export interface OwnedTopicOptions {
  name: string;
  ledger: ManagedLedger;
  dedup: Deduplication;
  lac: LacNotifier;
  metrics: WriterMetrics;
  maxPendingBytes: number;
  maxPendingEntries: number;
  maxMessageSizeBytes: number;
  now: () => number;
  /** Closes the managed ledger and forgets it (the factory's closeLedger), so a reload opens it afresh. */
  closeLedger: () => Promise<void>;
  /** Called once this topic is unloaded, with the reason consumers are told. */
  onUnloaded: (topic: OwnedTopic, error: LedgerlineError) => void;
  /** Another owner took the topic: the registry unloads it without releasing the lease. */
  onOwnershipLost: (topic: OwnedTopic, error: LedgerlineError) => void;
}

/**
 * A topic this instance owns: its managed ledger, deduplication, the bound on
 * bytes waiting for the ledger store, and the listeners (consumers) to tell
 * when it goes away.
 */
export class OwnedTopic {
  readonly name: string;
  readonly ledger: ManagedLedger;
  readonly dedup: Deduplication;
  readonly rateIn: RateMeter;
  readonly rateOut: RateMeter;
  dedupHits = 0;
  private readonly budget: ByteBudget;
  /** This topic's children of the per-topic counters, looked up once rather than by label on every publish. */
  private readonly counters: { messagesIn: Counter.Internal; bytesIn: Counter.Internal; dedupHits: Counter.Internal };
  /** Entries handed to the managed ledger and not yet answered: kept below its maxPendingAppends. */
  private readonly entryBudget: ByteBudget;
  private unloadError: LedgerlineError | undefined;
  private readonly unloadListeners = new Set<(error: LedgerlineError) => void>();
  private readonly stopAdopting: () => void;
  /** While a transfer runs: new entries wait here until the topic is elsewhere (or the transfer gave up). */
  private handOver: { ended: Promise<void>; end: () => void } | undefined;
  /** Entries past the hand-over gate and not yet answered (admitted, or handed to the ledger): a transfer waits for them. */
  private readonly inFlight = new InFlight();
  /**
   * How to fail each receipt handed out and not yet settled (at most maxPendingEntries, as the
   * entry budget holds them). When the topic is unloaded because its ownership is lost, each is
   * answered with that reason at once, so producers resend to the next owner instead of waiting for
   * appends to a store this owner may not reach (the next owner's fence keeps those out anyway, and
   * deduplication answers a resend of one that did land with its original place). A set rather than
   * a race against one shared promise: every race would leave a reaction on it for the topic's life.
   */
  private readonly owed = new Set<(error: LedgerlineError) => void>();

  constructor(private readonly options: OwnedTopicOptions) {
    this.name = options.name;
    this.ledger = options.ledger;
    this.dedup = options.dedup;
    this.budget = new ByteBudget(options.maxPendingBytes);
    this.entryBudget = new ByteBudget(options.maxPendingEntries);
    this.counters = {
      messagesIn: options.metrics.messagesIn.labels({ topic: options.name }),
      bytesIn: options.metrics.bytesIn.labels({ topic: options.name }),
      dedupHits: options.metrics.dedupHits.labels({ topic: options.name }),
    };
    this.rateIn = new RateMeter(options.now);
    this.rateOut = new RateMeter(options.now);
    this.stopAdopting = options.ledger.onEntriesAdopted((entries) => options.dedup.adopted(entries));
  }

  get unloaded(): boolean {
    return this.unloadError !== undefined;
  }

  get pendingBytes(): number {
    return this.budget.usedBytes;
  }

  /** Entries handed to the managed ledger and not yet answered (the owner's load report sums them). */
  get pendingEntries(): number {
    return this.entryBudget.usedBytes;
  }

  /** Runs `listener` when the topic is unloaded; returns the function that removes it. */
  onUnload(listener: (error: LedgerlineError) => void): () => void {
    if (this.unloadError !== undefined) {
      listener(this.unloadError);
      return () => undefined;
    }
    this.unloadListeners.add(listener);
    return () => this.unloadListeners.delete(listener);
  }

  checkLoaded(): void {
    if (this.unloadError !== undefined) throw this.unloadError;
  }

  /** True while a transfer moves this topic away: lease checks leave it to the transfer. */
  get handingOver(): boolean {
    return this.handOver !== undefined;
  }

  /** Resolves once no transfer of this topic is under way (at once when none is). */
  async afterHandOver(): Promise<void> {
    while (this.handOver !== undefined) await this.handOver.ended;
  }

  /** The hand-over gate: entries wait while a transfer runs, then see its outcome; no promise when none runs (nearly always). */
  private passHandOver(): Promise<void> | undefined {
    if (this.handOver === undefined || this.unloadError !== undefined) {
      this.checkLoaded();
      return undefined;
    }
    return this.waitOutHandOver();
  }

  private async waitOutHandOver(): Promise<void> {
    while (this.handOver !== undefined && this.unloadError === undefined) await this.handOver.ended;
    this.checkLoaded();
  }

  /**
   * Stores one entry and resolves with its receipt once the ledger store
   * holds it; a duplicate (by producer name and sequence id) resolves with the
   * original's receipt and is not stored again.
   */
  async publish(message: PublishMessage, signal?: AbortSignal): Promise<Receipt> {
    const { receipt } = await this.submit(message, signal);
    return receipt;
  }

  /**
   * Like publish, in two steps: resolves once the entry is handed to the
   * managed ledger (so the caller may submit the next one and keep the order),
   * with the receipt still to come.
   */
  async submit(message: PublishMessage, signal?: AbortSignal): Promise<{ receipt: Promise<Receipt> }> {
    const gate = this.passHandOver();
    if (gate !== undefined) await gate;
    const { bytes, numMessages } = prepareEntry(message, this.options.now(), this.options.maxMessageSizeBytes);
    const waiting = this.budget.acquire(bytes.length, signal);
    if (waiting !== undefined) await waiting;
    const waitingForRoom = this.entryBudget.acquire(1, signal);
    if (waitingForRoom !== undefined) {
      try {
        await waitingForRoom;
      } catch (error) {
        this.budget.release(bytes.length);
        throw error;
      }
    }
    let handedOver = false;
    let admitted: (() => void) | undefined;
    try {
      const gateAgain = this.passHandOver();
      if (gateAgain !== undefined) await gateAgain;
      // Past the gate and not yet handed to the ledger counts as in flight: a transfer waits for it too.
      admitted = this.inFlight.begin();
      // The call's signal is the stream's for its whole life: deduplication keeps order per stream by it. The
      // verdict that lets the entry through is taken in the synchronous run of the append that records its ids
      // as pushed (every wait asks again), so two streams of one producer never both hear the same ids are new.
      let verdict = this.dedupVerdict(message, signal);
      while (verdict.kind === 'wait') {
        await verdict.until;
        this.checkLoaded();
        verdict = this.dedupVerdict(message, signal);
      }
      if (verdict.kind === 'duplicate') {
        return { receipt: Promise.resolve(this.duplicate(verdict.receipt, message.sequenceId)) };
      }
      if (verdict.kind === 'gap') throw sequenceGap(message.producerName, message.sequenceId, verdict.resendFrom);
      const appending = this.ledger.append(bytes, numMessages);
      const answered = this.inFlight.begin();
      const settled = (): void => {
        this.budget.release(bytes.length);
        this.entryBudget.release(1);
        answered();
      };
      const receipt = this.complete(message, appending, bytes.length, numMessages, signal, settled);
      handedOver = true;
      return { receipt };
    } finally {
      admitted?.();
      if (!handedOver) {
        this.budget.release(bytes.length);
        this.entryBudget.release(1);
      }
    }
  }

  /** What deduplication says of `message` now, or what to wait for before asking again. */
  private dedupVerdict(message: PublishMessage, stream: object | undefined): DedupVerdict {
    if (message.producerName === '') return { kind: 'new' };
    // An append failed as in doubt may be in the log: no id is new until the ledger is checked (as any append waits).
    if (this.ledger.appendsInDoubt) {
      const until = this.ledger.settleAppends().catch((thrown: unknown) => {
        throw this.appendFailure(LedgerlineError.from(thrown));
      });
      return { kind: 'wait', until };
    }
    return this.dedup.check(message.producerName, message.sequenceId, stream, message.contiguousSequence);
  }

  /**
   * The receipt of an entry handed to the ledger: settled by its append, or failed first by an unload for lost
   * ownership (through `owed`). One promise for the caller and one for deduplication to wait on, per entry.
   */
  private complete(
    message: PublishMessage,
    appending: Promise<AppendResult>,
    sizeBytes: number,
    numMessages: number,
    stream: object | undefined,
    settled: () => void,
  ): Promise<Receipt> {
    const producer = message.producerName;
    const first = message.sequenceId;
    const highest = first + BigInt(numMessages - 1);
    let resolve!: (receipt: Receipt) => void;
    let reject!: (error: unknown) => void;
    const receipt = new Promise<Receipt>((resolveReceipt, rejectReceipt) => {
      resolve = resolveReceipt;
      reject = rejectReceipt;
    });
    this.owed.add(reject);
    // Neither reaction throws, so `answered` settles (resolved) once the append is answered and recorded.
    // `settled` last, whatever throws: a transfer waiting on the entries in flight snapshots deduplication after them.
    const answered = appending.then(
      (result) => {
        try {
          const stored = storedReceipt(result, this.options.now(), first);
          if (producer !== '') this.dedup.persisted(producer, highest, stored);
          this.counters.messagesIn.inc(numMessages);
          this.counters.bytesIn.inc(sizeBytes);
          this.rateIn.record(numMessages, sizeBytes);
          this.options.lac.advanced(result.position.ledgerId, result.position.entryId, result.lastOffset);
          this.dedup.maybeSnapshot(result.position);
          resolve(receiptOf(stored, first, false));
        } catch (error) {
          reject(error);
        } finally {
          this.owed.delete(reject);
          settled();
        }
      },
      (thrown: unknown) => {
        try {
          if (producer !== '') this.dedup.failed(producer, first, stream);
          reject(this.appendFailure(LedgerlineError.from(thrown)));
        } catch (error) {
          reject(error);
        } finally {
          this.owed.delete(reject);
          settled();
        }
      },
    );
    if (producer !== '') this.dedup.pushed(producer, highest, answered);
    return receipt;
  }

  /** Appends an entry already in the stored layout (dead letters), within the topic's byte bound. */
  async appendStored(bytes: Uint8Array, numMessages: number): Promise<void> {
    await this.passHandOver();
    const waiting = this.budget.acquire(bytes.length);
    if (waiting !== undefined) await waiting;
    await this.entryBudget.acquire(1);
    const answered = this.inFlight.begin();
    try {
      const result = await this.ledger.append(bytes, numMessages);
      this.options.lac.advanced(result.position.ledgerId, result.position.entryId, result.lastOffset);
    } catch (thrown) {
      throw this.appendFailure(LedgerlineError.from(thrown));
    } finally {
      answered();
      this.budget.release(bytes.length);
      this.entryBudget.release(1);
    }
  }

  private duplicate(original: StoredReceipt | undefined, sequenceId: bigint): Receipt {
    this.dedupHits++;
    this.counters.dedupHits.inc();
    return receiptOf(original, sequenceId, true);
  }

  private appendFailure(error: LedgerlineError): LedgerlineError {
    if (isOwnershipLost(error)) {
      this.options.onOwnershipLost(this, error);
      return topicUnloaded(this.name, `another owner took it: ${error.reason}`);
    }
    if (isClosed(error) && this.unloadError !== undefined) return this.unloadError;
    return error;
  }

  /**
   * The first steps of a transfer: new entries wait from now on; once every
   * entry in flight is answered, deduplication is snapshotted (the close
   * writes it with the other cursors: a write of its own would lengthen the
   * pause) and the managed ledger closed, so the next owner opens it without
   * fencing and starts with both warm. Consumers are told at endHandOver.
   */
  async stopForHandOver(): Promise<void> {
    this.holdForHandOver();
    await this.inFlight.whenIdle();
    this.stopAdopting();
    if (this.ledger.state === 'open' || this.ledger.state === 'terminated') {
      this.dedup.markSnapshot(this.ledger.lastConfirmedPosition());
    }
    await this.options.closeLedger();
  }

  /** New entries wait from now on, until endHandOver or abandon; TOPIC_UNLOADED when a move is under way already. */
  holdForHandOver(): void {
    if (this.handOver !== undefined || this.unloadError !== undefined) {
      throw topicUnloaded(this.name, 'it is being moved or was unloaded already');
    }
    let end = (): void => undefined;
    const ended = new Promise<void>((resolve) => (end = resolve));
    this.handOver = { ended, end };
  }

  /**
   * The store is unreachable and the lease went elsewhere (or was released): what is owed and waiting is
   * answered `error` at once (safe as for a lost ownership: the next owner fences before it writes).
   */
  abandon(error: LedgerlineError): void {
    if (this.unloadError === undefined) {
      this.markUnloaded(error);
      for (const fail of this.owed) fail(error);
      this.owed.clear();
      this.options.onUnloaded(this, error);
    }
    const gate = this.handOver;
    this.handOver = undefined;
    gate?.end();
    this.options.closeLedger().catch(() => undefined); // Not awaited: it waits for appends the retries hold.
  }

  /**
   * Ends a transfer: the topic is unloaded here with `error` (NOT_OWNER
   * naming the new owner, or TOPIC_UNLOADED when the transfer gave up), which
   * the entries that waited and the consumers get.
   */
  async endHandOver(error: LedgerlineError): Promise<void> {
    if (this.unloadError === undefined) this.finishUnload(error);
    const gate = this.handOver;
    this.handOver = undefined;
    gate?.end();
    // The ledger may still be open when stopping failed part way.
    await this.options.closeLedger().catch(() => undefined);
  }

  private finishUnload(error: LedgerlineError): void {
    this.markUnloaded(error);
    this.options.onUnloaded(this, error);
  }

  /** From now on every call is refused with `error`, and the consumers are told it. */
  private markUnloaded(error: LedgerlineError): void {
    this.unloadError = error;
    this.stopAdopting();
    for (const listener of [...this.unloadListeners]) listener(error);
    this.unloadListeners.clear();
  }

  /**
   * Stops taking publishes, tells consumers, and closes the managed ledger:
   * appends in flight finish (their receipts still go out, unless the
   * ownership is lost: then they are answered with the unload at once), cursors
   * flush, the ledger being written is closed and recorded. The lease is the registry's.
   */
  async unload(why: string, ownershipLost = false): Promise<void> {
    if (this.unloadError !== undefined) return;
    const error = topicUnloaded(this.name, why);
    this.markUnloaded(error);
    if (ownershipLost) {
      for (const fail of this.owed) fail(error);
      this.owed.clear();
    }
    if (this.ledger.state === 'open' || this.ledger.state === 'terminated') {
      await this.dedup.snapshot(this.ledger.lastConfirmedPosition()).catch(() => undefined);
    }
    await this.options.closeLedger().catch(() => undefined);
    this.options.onUnloaded(this, error);
  }
}
