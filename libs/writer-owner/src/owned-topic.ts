import type { Counter } from 'prom-client';
import { LedgerlineError } from '@ledgerline/errors';
import type { AppendResult, ManagedLedger } from '@ledgerline/managed-ledger';
import { topicUnloaded } from '@ledgerline/ownership';
import type { PublishMessage } from '@ledgerline/proto';
import { ByteBudget } from './byte-budget.js';
import type { Deduplication } from './deduplication.js';
import { isClosed, isOwnershipLost } from './errors.js';
import { InFlight } from './in-flight.js';
import type { LacNotifier } from './lac-notifier.js';
import type { WriterMetrics } from './metrics.js';
import { ProducerFence } from './producer-fence.js';
import { PublishQueue } from './publish-queue.js';
import { RateMeter } from './rate-meter.js';
import type { Receipt } from './receipts.js';
import { TopicBatch } from './topic-batch.js';

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
  /** This topic's children of the per-topic counters, looked up once rather than by label on every publish or delivery. */
  private readonly counters: {
    messagesIn: Counter.Internal;
    bytesIn: Counter.Internal;
    dedupHits: Counter.Internal;
    messagesOut: Counter.Internal;
    bytesOut: Counter.Internal;
  };
  /** Entries handed to the managed ledger and not yet answered: kept below its maxPendingAppends. */
  private readonly entryBudget: ByteBudget;
  private unloadError: LedgerlineError | undefined;
  private readonly unloadListeners = new Set<(error: LedgerlineError) => void>();
  private readonly stopAdopting: () => void;
  /** While a transfer runs: new entries wait here until the topic is elsewhere (or the transfer gave up). */
  private handOver: { ended: Promise<void>; end: () => void } | undefined;
  /** Entries handed to the managed ledger and not yet answered: a transfer waits for them. */
  private readonly inFlight = new InFlight();
  /** Where publishes take their order and are admitted (see PublishQueue). */
  private readonly queue: PublishQueue;

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
      messagesOut: options.metrics.messagesOut.labels({ topic: options.name }),
      bytesOut: options.metrics.bytesOut.labels({ topic: options.name }),
    };
    this.rateIn = new RateMeter(options.now);
    this.rateOut = new RateMeter(options.now);
    this.stopAdopting = options.ledger.onEntriesAdopted((entries) => options.dedup.adopted(entries));
    this.queue = new PublishQueue({
      ledger: options.ledger,
      dedup: options.dedup,
      budget: this.budget,
      entryBudget: this.entryBudget,
      inFlight: this.inFlight,
      maxMessageSizeBytes: options.maxMessageSizeBytes,
      now: options.now,
      trace: options.metrics.trace,
      gate: () => this.passHandOver(),
      appendFailure: (error) => this.appendFailure(error),
      stored: (messages, bytes, last) => this.stored(messages, bytes, last),
      duplicateAnswered: () => {
        this.dedupHits++;
        this.counters.dedupHits.inc();
      },
    });
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
   * Takes one request's entries for this topic into its queue, in the turn they were read: their order is
   * fixed here, and each is answered in `batch` (a receipt once the ledger store holds it; a duplicate, by
   * producer name and sequence id, with the original's receipt, not stored again).
   */
  enqueue(batch: TopicBatch): void {
    this.queue.enqueue(batch);
  }

  /**
   * Stores one entry and resolves with its receipt once the ledger store holds it (a batch of one). `fence`
   * keeps the order of the stream it came on after a refusal; a call of its own by default.
   */
  async publish(message: PublishMessage, signal?: AbortSignal, fence = new ProducerFence()): Promise<Receipt> {
    const batch = new TopicBatch([message], fence, signal);
    this.enqueue(batch);
    await batch.answered;
    const receipt = batch.receipts[0];
    if (receipt === undefined) throw batch.failures[0];
    return receipt;
  }

  /** One store write's entries are stored: counters, the LAC hint, and a deduplication snapshot when due. */
  private stored(messages: number, bytes: number, last: AppendResult): void {
    this.counters.messagesIn.inc(messages);
    this.counters.bytesIn.inc(bytes);
    this.rateIn.record(messages, bytes);
    this.options.lac.advanced(last.position.ledgerId, last.position.entryId, last.lastOffset);
    this.dedup.maybeSnapshot(last.position);
  }

  /** Messages and payload bytes delivered to a consumer of this topic. */
  delivered(messages: number, bytes: number): void {
    this.counters.messagesOut.inc(messages);
    this.counters.bytesOut.inc(bytes);
    this.rateOut.record(messages, bytes);
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
      this.queue.failOwed(error);
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
    this.queue.pump(); // What still waits in the queue is refused with `error` now.
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
    if (ownershipLost) this.queue.failOwed(error);
    if (this.ledger.state === 'open' || this.ledger.state === 'terminated') {
      await this.dedup.snapshot(this.ledger.lastConfirmedPosition()).catch(() => undefined);
    }
    await this.options.closeLedger().catch(() => undefined);
    this.options.onUnloaded(this, error);
  }
}
