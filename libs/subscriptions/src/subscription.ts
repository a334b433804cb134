import type { EntryPosition, Position } from '@ledgerline/cursor-codec';
import { invalidArgument, LedgerlineError } from '@ledgerline/errors';
import { Acknowledgements } from './acknowledgements.js';
import { Consumer } from './consumer.js';
import { ConsumerState } from './consumer-state.js';
import { DeliveryCounts } from './delivery-counts.js';
import type { Dispatcher } from './dispatcher.js';
import { EntryDispatch } from './entry-dispatch.js';
import { consumerClosedError, subscriptionClosedError, SubscriptionReason } from './errors.js';
import { MAX_AVAILABLE_PERMITS, resolveSubscriptionLimits, type SubscriptionLimits } from './limits.js';
import { MultipleConsumersDispatcher } from './multiple-consumers-dispatcher.js';
import { PendingAcks } from './pending-acks.js';
import { ReadLoop } from './read-loop.js';
import { RedeliveryTimers } from './redelivery-timers.js';
import { ReplayQueue } from './replay-queue.js';
import { systemScheduler, type Scheduler } from './scheduler.js';
import { SingleActiveConsumerDispatcher } from './single-active-consumer-dispatcher.js';
import { StickyKeyDispatcher } from './sticky-key-dispatcher.js';
import {
  SubscriptionType,
  type ConsumerOptions,
  type ConsumerStats,
  type DeadLetterPublisher,
  type DispatchEntry,
  type DispatchState,
  type SeekTarget,
  type SubscriptionSource,
  type SubscriptionStats,
} from './types.js';
import { checkPermits, resolveConsumerOptions, type CheckedAck } from './validate.js';

export interface SubscriptionOptions<E extends DispatchEntry> {
  /** The subscription's name (for stats and errors). */
  name: string;
  source: SubscriptionSource<E>;
  /** Time and timers; real time by default. */
  scheduler?: Scheduler;
  limits?: Partial<SubscriptionLimits>;
  /** Publishes to a dead-letter topic; without it, consumers asking for a dead-letter policy are refused. */
  deadLetter?: DeadLetterPublisher<E>;
  /**
   * Failover on a partition of a partitioned topic: the active consumer is
   * the (partitionIndex mod n)th in Pulsar's order, which spreads partitions
   * over the consumers. Default 0: the first.
   */
  partitionIndex?: number;
  /** Failures the subscription handled itself (a read retried, a dead-letter publish retried, a sink that threw). */
  onError?: (error: LedgerlineError) => void;
}

const CUMULATIVE_TYPES = new Set<SubscriptionType>([SubscriptionType.EXCLUSIVE, SubscriptionType.FAILOVER]);

/**
 * One subscription of a topic on an owner: its consumers, and the dispatch
 * of the subscription's entries to them. Entries are read once from the
 * source for every consumer; flow permits, unacked bounds, ordering per type
 * and redelivery decide who gets what. Transport-free: the owner wires a
 * SubscriptionSource (its cursor) and one ConsumerSink per consumer.
 *
 * This class keeps the consumers, their flow permits and acks; ReadLoop
 * reads, EntryDispatch delivers, and the Dispatcher of the subscription's
 * type picks the consumer for each entry.
 */
export class Subscription<E extends DispatchEntry> {
  readonly name: string;
  private readonly source: SubscriptionSource<E>;
  private readonly scheduler: Scheduler;
  private readonly limits: SubscriptionLimits;
  private readonly options: SubscriptionOptions<E>;
  private readonly consumers: ConsumerState<E>[] = [];
  private readonly pending: PendingAcks<E>;
  private readonly timers: RedeliveryTimers<E>;
  private readonly replay = new ReplayQueue();
  private readonly counts: DeliveryCounts;
  private readonly acks: Acknowledgements<E>;
  /**
   * One per type, kept: the type changes only once every consumer has left,
   * and a type that comes back finds its dispatcher as it was.
   */
  private readonly dispatchers: Readonly<Record<SubscriptionType, Dispatcher<E>>>;
  private readonly dispatch: EntryDispatch<E>;
  private readonly readLoop: ReadLoop<E>;
  private subscriptionType: SubscriptionType | undefined;
  private nextConsumerId = 1;

  constructor(options: SubscriptionOptions<E>) {
    this.options = options;
    this.name = options.name;
    this.source = options.source;
    this.scheduler = options.scheduler ?? systemScheduler;
    this.limits = resolveSubscriptionLimits(options.limits);
    const partitionIndex = options.partitionIndex ?? 0;
    if (!Number.isSafeInteger(partitionIndex) || partitionIndex < 0) {
      throw invalidArgument(SubscriptionReason.INVALID_CONFIG, 'partitionIndex is an integer >= 0');
    }
    this.counts = new DeliveryCounts(this.limits.maxTrackedDeliveryCounts);
    this.pending = new PendingAcks(
      this.limits.maxUnackedMessagesPerConsumer,
      this.limits.maxUnackedMessagesPerSubscription,
    );
    this.acks = new Acknowledgements(this.source, this.pending, this.replay, this.counts, () => this.readLoop.wake());
    this.timers = new RedeliveryTimers(this.scheduler, (c, positions) => this.acks.release(c, positions));
    this.dispatchers = this.createDispatchers(partitionIndex);
    const onError = (error: LedgerlineError) => this.options.onError?.(error);
    this.dispatch = new EntryDispatch({
      source: this.source,
      scheduler: this.scheduler,
      limits: this.limits,
      consumers: this.consumers,
      pending: this.pending,
      replay: this.replay,
      counts: this.counts,
      timers: this.timers,
      deadLetter: options.deadLetter,
      dispatcher: () => (this.subscriptionType === undefined ? undefined : this.dispatchers[this.subscriptionType]),
      epoch: () => this.readLoop.epoch,
      closed: () => this.readLoop.closed,
      wake: () => this.readLoop.wake(),
      settle: (p) => this.acks.settle(p),
      callSink: (c, call) => this.callSink(c, call),
      onError,
    });
    this.readLoop = new ReadLoop(this.name, this.source, this.scheduler, this.dispatch, onError, (error) =>
      this.shutdown(error),
    );
  }

  private createDispatchers(partitionIndex: number): Record<SubscriptionType, Dispatcher<E>> {
    const handover = {
      releaseAll: (c: ConsumerState<E>) => this.acks.releaseAll(c),
      callSink: (c: ConsumerState<E>, call: () => void) => this.callSink(c, call),
    };
    const { consumers, replay } = this;
    const single = (type: typeof SubscriptionType.EXCLUSIVE | typeof SubscriptionType.FAILOVER) =>
      new SingleActiveConsumerDispatcher(type, consumers, replay, partitionIndex, handover);
    return {
      [SubscriptionType.EXCLUSIVE]: single(SubscriptionType.EXCLUSIVE),
      [SubscriptionType.FAILOVER]: single(SubscriptionType.FAILOVER),
      [SubscriptionType.SHARED]: new MultipleConsumersDispatcher(consumers, replay),
      [SubscriptionType.KEY_SHARED]: new StickyKeyDispatcher(
        consumers,
        replay,
        this.pending,
        this.limits.keySharedHashRingPoints,
      ),
    };
  }

  /** The type of the connected consumers (undefined before the first). */
  get type(): SubscriptionType | undefined {
    return this.subscriptionType;
  }

  get state(): DispatchState {
    return this.readLoop.state;
  }

  get consumerCount(): number {
    return this.consumers.length;
  }

  /**
   * Connects a consumer. Refused: FAILED_PRECONDITION / CONSUMER_BUSY when
   * an Exclusive subscription has its consumer, SUBSCRIPTION_TYPE_MISMATCH
   * when connected consumers have another type, RESOURCE_EXHAUSTED /
   * TOO_MANY_CONSUMERS past maxConsumers, INVALID_ARGUMENT for bad options.
   * The consumer gets nothing until it grants permits (Consumer.flow).
   */
  addConsumer(options: ConsumerOptions<E>): Consumer<E> {
    this.checkOpen();
    const resolved = resolveConsumerOptions(options);
    if (resolved.deadLetterPolicy !== undefined && this.options.deadLetter === undefined) {
      throw new LedgerlineError(
        'FAILED_PRECONDITION',
        SubscriptionReason.DEAD_LETTER_UNSUPPORTED,
        'this owner cannot publish to a dead-letter topic; subscribe without a dead-letter policy',
      );
    }
    this.checkAdmission(resolved.type, resolved.name);
    const sameName = this.consumers.filter((c) => c.name === resolved.name).length;
    const ringName = sameName === 0 ? resolved.name : `${resolved.name}#${this.nextConsumerId}`;
    const state = new ConsumerState<E>(this.nextConsumerId++, ringName, resolved, () => this.scheduler.now());
    const dispatcher = this.dispatchers[resolved.type];
    if (this.subscriptionType !== resolved.type) {
      // Positions released by consumers of the previous type wait in replay: they take the new type's hashes.
      this.replay.rehash((key) => dispatcher.keyHash(key));
    }
    this.subscriptionType = resolved.type;
    this.consumers.push(state);
    dispatcher.consumerAdded(state);
    this.readLoop.wake();
    return new Consumer(this, state);
  }

  private checkAdmission(type: SubscriptionType, name: string): void {
    if (this.consumers.length === 0) return;
    if (this.subscriptionType !== type) {
      throw new LedgerlineError(
        'FAILED_PRECONDITION',
        SubscriptionReason.SUBSCRIPTION_TYPE_MISMATCH,
        `subscription ${this.name} has ${this.subscriptionType} consumers; ${name} asked for ${type}`,
      );
    }
    if (type === SubscriptionType.EXCLUSIVE) {
      throw new LedgerlineError(
        'FAILED_PRECONDITION',
        SubscriptionReason.CONSUMER_BUSY,
        `exclusive subscription ${this.name} already has consumer ${this.consumers[0]?.name}`,
      );
    }
    if (this.consumers.length >= this.limits.maxConsumers) {
      throw new LedgerlineError(
        'RESOURCE_EXHAUSTED',
        SubscriptionReason.TOO_MANY_CONSUMERS,
        `subscription ${this.name} has ${this.limits.maxConsumers} consumers (maxConsumers)`,
      );
    }
  }

  /** @internal Consumer.flow */
  flow(c: ConsumerState<E>, permits: number): void {
    this.checkConsumer(c);
    c.permits = Math.min(c.permits + checkPermits(permits), MAX_AVAILABLE_PERMITS);
    this.readLoop.wake();
  }

  /**
   * @internal Consumer.acknowledgeChecked. Checked whole where it entered
   * (checkAckRequest: INVALID_ARGUMENT changes nothing); here only what needs
   * the consumer (cumulative on its type), then applied: positions, batch
   * indexes, cumulative.
   */
  async acknowledge(c: ConsumerState<E>, checked: CheckedAck): Promise<void> {
    this.checkConsumer(c);
    if (checked.cumulative !== undefined && !CUMULATIVE_TYPES.has(c.options.type)) {
      throw invalidArgument(
        SubscriptionReason.CUMULATIVE_ACK_NOT_ALLOWED,
        `cumulative acks need Exclusive or Failover; subscription ${this.name} is ${c.options.type}`,
      );
    }
    await this.acks.apply(checked);
  }

  /** @internal Consumer.nack: redelivered after the consumer's nack delay. */
  nack(c: ConsumerState<E>, positions: readonly EntryPosition[]): void {
    this.checkConsumer(c);
    const mine = positions.filter((p) => this.pending.holderOf(p) === c);
    if (mine.length > 0) this.timers.nacked(c, mine, this.dispatch.lastDeliverySeq);
  }

  /** @internal Consumer.redeliverUnacknowledged */
  redeliverUnacknowledged(c: ConsumerState<E>): void {
    this.checkConsumer(c);
    this.acks.releaseAll(c);
  }

  /** @internal Consumer.close: what it had not acknowledged goes to the other consumers. */
  removeConsumer(c: ConsumerState<E>): void {
    if (c.closed) return;
    c.closed = true;
    c.stopTimers();
    this.acks.releaseAll(c);
    this.consumers.splice(this.consumers.indexOf(c), 1);
    this.dispatchers[c.options.type].consumerRemoved(c);
    this.readLoop.wake();
  }

  /**
   * Moves the subscription (SeekRequest): everything delivered and not
   * acknowledged is forgotten and delivered again from the new position.
   */
  async seek(target: SeekTarget): Promise<Position> {
    this.checkOpen();
    this.readLoop.beginSeek();
    try {
      // The source's read position must not be moved by a read that began before the seek.
      await this.readLoop.readInFlight();
      const next = await this.source.seek(target);
      this.forgetDeliveries();
      return next;
    } finally {
      this.readLoop.endSeek();
    }
  }

  /**
   * Stops dispatch and closes every consumer with `error` (topic unloaded,
   * unsubscribed) at once; resolves when a source call in flight has returned
   * (nothing is delivered after close either way).
   */
  async close(error: LedgerlineError = subscriptionClosedError(this.name)): Promise<void> {
    this.shutdown(error);
    await this.readLoop.finished;
  }

  private shutdown(error: LedgerlineError): void {
    if (this.readLoop.closed) return;
    this.readLoop.stop();
    for (const c of [...this.consumers]) {
      c.closed = true;
      c.stopTimers();
      this.callSink(c, () => c.options.sink.close(error));
    }
    this.consumers.length = 0;
    this.readLoop.wake();
  }

  async stats(): Promise<SubscriptionStats> {
    return {
      name: this.name,
      type: this.subscriptionType,
      backlogMessages: await this.source.backlog(),
      markDelete: this.source.markDeletePosition(),
      unackedMessages: this.pending.unackedMessages,
      blockedOnUnacked: this.pending.blocked,
      msgRateOut: this.dispatch.rate.messagesPerSecond,
      msgThroughputOut: this.dispatch.rate.bytesPerSecond,
      redeliveredMessages: this.dispatch.redeliveredMessages,
      replayPositions: this.replay.size,
      dispatchState: this.readLoop.state,
      consumers: this.consumers.map((c) => this.consumerStats(c)),
    };
  }

  /** @internal Consumer.stats */
  consumerStats(c: ConsumerState<E>): ConsumerStats {
    return c.stats();
  }

  private callSink(c: ConsumerState<E>, call: () => void): void {
    try {
      call();
    } catch (err) {
      // A transport that cannot take the call has lost its consumer: what it held goes to the others.
      this.options.onError?.(LedgerlineError.from(err, SubscriptionReason.CONSUMER_SINK_FAILED));
      if (!c.closed && !this.readLoop.closed) queueMicrotask(() => this.removeConsumer(c));
    }
  }

  /** After a seek: nothing delivered before is pending or waits for replay; the source reads it again if it still counts. */
  private forgetDeliveries(): void {
    for (const c of this.consumers) {
      for (const item of [...c.pending.values()]) this.pending.remove(item.position, c);
      c.stopTimers();
    }
    this.replay.clear();
  }

  // ---- checks ----

  private checkOpen(): void {
    if (this.readLoop.closed) throw subscriptionClosedError(this.name);
  }

  private checkConsumer(c: ConsumerState<E>): void {
    this.checkOpen();
    if (c.closed) throw consumerClosedError(c.name);
  }
}
