import { comparePositions, positionKey, type Position } from '@ledgerline/cursor-codec';
import { invalidArgument, LedgerlineError } from '@ledgerline/errors';
import { Consumer } from './consumer.js';
import { ConsumerState, type PendingItem } from './consumer-state.js';
import { DeliveryCounts } from './delivery-counts.js';
import { consumerClosedError, subscriptionClosedError, SubscriptionReason } from './errors.js';
import {
  DEAD_LETTER_RETRY_DELAY_MS,
  MAX_AVAILABLE_PERMITS,
  MAX_EMPTY_WAKEUPS,
  READ_RETRY_BASE_DELAY_MS,
  READ_RETRY_MAX_DELAY_MS,
  resolveSubscriptionLimits,
  type SubscriptionLimits,
} from './limits.js';
import { PendingAcks } from './pending-acks.js';
import { RateMeter } from './rate-meter.js';
import { RedeliveryTimers } from './redelivery-timers.js';
import { ReplayQueue, type ReplayItem } from './replay-queue.js';
import { systemScheduler, type Scheduler } from './scheduler.js';
import { StickyKeyConsumerSelector, stickyKeyHash } from './sticky-key-selector.js';
import {
  SubscriptionType,
  type AckRequest,
  type ConsumerOptions,
  type ConsumerStats,
  type DeadLetterPolicy,
  type DeadLetterPublisher,
  type DispatchEntry,
  type DispatchState,
  type SeekTarget,
  type SubscriptionSource,
  type SubscriptionStats,
} from './types.js';
import { checkAckRequest, checkPermits, checkPositions, resolveConsumerOptions } from './validate.js';

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
  private readonly selector: StickyKeyConsumerSelector<ConsumerState<E>>;
  private readonly rate: RateMeter;
  private subscriptionType: SubscriptionType | undefined;
  private activeConsumer: ConsumerState<E> | undefined;
  private roundRobin = 0;
  private nextConsumerId = 1;
  private redeliveredMessages = 0;
  private deliverySeq = 0;
  /** Messages per entry in the last read, to turn permits (messages) into entries to read. */
  private messagesPerEntry = 1;
  private dispatchState: DispatchState = 'running';
  private closed = false;
  /** Bumped by seek and close: a read that began before is stale. */
  private epoch = 0;
  private seeking = 0;
  private wakeRequested = false;
  private parked: (() => void) | undefined;
  private entriesWait: AbortController | undefined;
  private inFlight: Promise<unknown> | undefined;
  private readFailures = 0;
  /** Wake-ups from the source (not aborts) since the last read that found entries. */
  private emptyWakeups = 0;
  private stopRetryWait: (() => void) | undefined;
  private readonly loop: Promise<void>;

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
    this.timers = new RedeliveryTimers(this.scheduler, (c, positions) => this.release(c, positions));
    this.selector = new StickyKeyConsumerSelector(this.limits.keySharedHashRingPoints);
    this.rate = new RateMeter(() => this.scheduler.now());
    this.loop = this.run();
  }

  /** The type of the connected consumers (undefined before the first). */
  get type(): SubscriptionType | undefined {
    return this.subscriptionType;
  }

  get state(): DispatchState {
    return this.dispatchState;
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
    if (this.subscriptionType !== resolved.type) {
      // Positions released by consumers of the previous type wait in replay: they take the new type's hashes.
      this.replay.rehash(resolved.type === SubscriptionType.KEY_SHARED ? stickyKeyHash : () => -1);
    }
    this.subscriptionType = resolved.type;
    this.consumers.push(state);
    if (resolved.type === SubscriptionType.KEY_SHARED) this.selector.add(state, ringName);
    if (resolved.type === SubscriptionType.FAILOVER) this.electActive(state);
    else state.active = true;
    if (resolved.type === SubscriptionType.EXCLUSIVE) this.activeConsumer = state;
    this.wake();
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
    this.wake();
  }

  /**
   * @internal Consumer.acknowledge. Checked whole first (INVALID_ARGUMENT
   * changes nothing), then applied: positions, batch indexes, cumulative.
   */
  async acknowledge(c: ConsumerState<E>, ack: AckRequest): Promise<void> {
    this.checkConsumer(c);
    const { positions, batchAcks, cumulative } = checkAckRequest(ack);
    if (cumulative !== undefined && !CUMULATIVE_TYPES.has(c.options.type)) {
      throw invalidArgument(
        SubscriptionReason.CUMULATIVE_ACK_NOT_ALLOWED,
        `cumulative acks need Exclusive or Failover; subscription ${this.name} is ${c.options.type}`,
      );
    }
    if (positions.length > 0) {
      await this.source.ack(positions);
      for (const p of positions) this.settle(p);
    }
    for (const b of batchAcks) {
      await this.source.ackBatchIndexes(b.position, b.ackedIndexes, b.batchSize);
      this.afterBatchAck(b.position, b.ackedIndexes.length);
    }
    if (cumulative !== undefined) {
      await this.source.ackCumulative(cumulative);
      this.settleUpTo(cumulative);
    }
    this.wake();
  }

  /** @internal Consumer.nack: redelivered after the consumer's nack delay. */
  nack(c: ConsumerState<E>, positions: readonly Position[]): void {
    this.checkConsumer(c);
    const mine = checkPositions(positions, 'nack').filter((p) => this.pending.holderOf(p) === c);
    if (mine.length > 0) this.timers.nacked(c, mine, this.deliverySeq);
  }

  /** @internal Consumer.redeliverUnacknowledged */
  redeliverUnacknowledged(c: ConsumerState<E>): void {
    this.checkConsumer(c);
    this.release(
      c,
      [...c.pending.values()].map((item) => item.position),
    );
  }

  /** @internal Consumer.close: what it had not acknowledged goes to the other consumers. */
  removeConsumer(c: ConsumerState<E>): void {
    if (c.closed) return;
    c.closed = true;
    c.stopTimers();
    this.release(
      c,
      [...c.pending.values()].map((item) => item.position),
    );
    this.consumers.splice(this.consumers.indexOf(c), 1);
    if (c.options.type === SubscriptionType.KEY_SHARED) this.selector.remove(c);
    if (this.activeConsumer === c) this.activeConsumer = undefined;
    if (c.options.type === SubscriptionType.FAILOVER) this.electActive(undefined);
    this.wake();
  }

  /**
   * Moves the subscription (SeekRequest): everything delivered and not
   * acknowledged is forgotten and delivered again from the new position.
   */
  async seek(target: SeekTarget): Promise<Position> {
    this.checkOpen();
    this.seeking++;
    this.epoch++;
    this.wake();
    try {
      // The source's read position must not be moved by a read that began before the seek.
      await this.inFlight?.catch(() => undefined);
      const next = await this.source.seek(target);
      this.forgetDeliveries();
      return next;
    } finally {
      this.seeking--;
      this.wake();
    }
  }

  /**
   * Stops dispatch and closes every consumer with `error` (topic unloaded,
   * unsubscribed) at once; resolves when a source call in flight has returned
   * (nothing is delivered after close either way).
   */
  async close(error: LedgerlineError = subscriptionClosedError(this.name)): Promise<void> {
    this.shutdown(error);
    await this.loop;
  }

  private shutdown(error: LedgerlineError): void {
    if (this.closed) return;
    this.closed = true;
    this.stopRetryWait?.();
    this.epoch++;
    this.dispatchState = 'closed';
    for (const c of [...this.consumers]) {
      c.closed = true;
      c.stopTimers();
      this.callSink(c, () => c.options.sink.close(error));
    }
    this.consumers.length = 0;
    this.wake();
  }

  async stats(): Promise<SubscriptionStats> {
    return {
      name: this.name,
      type: this.subscriptionType,
      backlogMessages: await this.source.backlog(),
      markDelete: this.source.markDeletePosition(),
      unackedMessages: this.pending.unackedMessages,
      blockedOnUnacked: this.pending.blocked,
      msgRateOut: this.rate.messagesPerSecond,
      msgThroughputOut: this.rate.bytesPerSecond,
      redeliveredMessages: this.redeliveredMessages,
      replayPositions: this.replay.size,
      dispatchState: this.dispatchState,
      consumers: this.consumers.map((c) => this.consumerStats(c)),
    };
  }

  /** @internal Consumer.stats */
  consumerStats(c: ConsumerState<E>): ConsumerStats {
    return {
      name: c.name,
      unackedMessages: c.unackedMessages,
      availablePermits: c.permits,
      blockedOnUnacked: c.blocked,
      msgRateOut: c.rate.messagesPerSecond,
      msgThroughputOut: c.rate.bytesPerSecond,
      redeliveredMessages: c.redeliveredMessages,
      active: c.active,
    };
  }

  // ---- dispatch loop ----

  private async run(): Promise<void> {
    while (!this.closed) {
      try {
        await this.step();
        this.readFailures = 0;
      } catch (err) {
        await this.onReadFailure(LedgerlineError.from(err));
      }
    }
    this.dispatchState = 'closed';
  }

  private async step(): Promise<void> {
    this.wakeRequested = false;
    if (this.seeking > 0) return this.park('waiting-for-consumers');
    const epoch = this.epoch;
    const replayBatch = this.pickReplay();
    if (replayBatch.length > 0) {
      this.dispatchState = 'running';
      const entries = await this.track(this.source.readPositions(replayBatch.map((item) => item.position)));
      if (epoch !== this.epoch) return;
      const { done, unread } = this.dispatchReplayed(replayBatch, entries);
      if (unread > 0) {
        // Retried like a failed read: the entries stay where they are in the replay order.
        throw new LedgerlineError(
          'UNAVAILABLE',
          SubscriptionReason.ENTRIES_NOT_READ,
          `${unread} unacknowledged entries of subscription ${this.name} could not be read again`,
        );
      }
      // Nothing delivered means nobody could take these after all: wait for a change rather than spin.
      if (done === 0) return this.park('waiting-for-consumers');
      return;
    }
    const capacity = this.readCapacity();
    if (capacity === 0) return this.park('waiting-for-consumers');
    this.dispatchState = 'running';
    const entries = await this.track(this.source.readEntries(capacity));
    // After a seek these came from the old read position: the source reads them again if they still count.
    if (epoch !== this.epoch) return;
    if (entries.length > 0) {
      this.emptyWakeups = 0;
      this.dispatchNew(entries);
      return;
    }
    if (this.emptyWakeups < MAX_EMPTY_WAKEUPS) return this.waitForEntries();
    // A source that keeps saying entries are there and then returns none would spin this loop: slow it down, and say so.
    this.emptyWakeups = 0;
    this.options.onError?.(
      new LedgerlineError(
        'INTERNAL',
        SubscriptionReason.SOURCE_WAKES_WITHOUT_ENTRIES,
        `the source of subscription ${this.name} woke its reader ${MAX_EMPTY_WAKEUPS} times with nothing to read`,
      ),
    );
    await this.pause(READ_RETRY_BASE_DELAY_MS);
  }

  private track<T>(read: Promise<T>): Promise<T> {
    this.inFlight = read;
    return read.finally(() => {
      if (this.inFlight === read) this.inFlight = undefined;
    });
  }

  private park(state: DispatchState): Promise<void> {
    if (this.wakeRequested || this.closed) return Promise.resolve();
    this.dispatchState = state;
    return new Promise<void>((resolve) => (this.parked = resolve));
  }

  private async waitForEntries(): Promise<void> {
    if (this.wakeRequested || this.closed) return;
    this.dispatchState = 'waiting-for-entries';
    const abort = new AbortController();
    this.entriesWait = abort;
    try {
      await this.track(this.source.waitForEntries(abort.signal));
      if (!abort.signal.aborted) this.emptyWakeups++;
    } finally {
      this.entriesWait = undefined;
    }
  }

  /** Something changed that may let dispatch do more. */
  private wake(): void {
    this.wakeRequested = true;
    const parked = this.parked;
    this.parked = undefined;
    parked?.();
    // Waiting for new entries only needs interrupting for work that is not new entries, or when
    // nobody is left to take them: an idle subscription then parks instead of holding a read waiter
    // on the source (the managed ledger's) until the topic unloads.
    if (this.replay.size > 0 || this.seeking > 0 || this.closed || this.consumers.length === 0)
      this.entriesWait?.abort();
  }

  private async onReadFailure(error: LedgerlineError): Promise<void> {
    this.options.onError?.(error);
    if (!error.retryable) {
      this.shutdown(error);
      return;
    }
    const delayMs = Math.min(READ_RETRY_MAX_DELAY_MS, READ_RETRY_BASE_DELAY_MS * 2 ** this.readFailures);
    this.readFailures++;
    // Timers come from the injected scheduler (tests drive time), hence no backoff library here.
    await this.pause(delayMs);
  }

  /** Waits `delayMs` before reading again (cut short by close). */
  private async pause(delayMs: number): Promise<void> {
    this.dispatchState = 'retrying';
    await new Promise<void>((resolve) => {
      const cancel = this.scheduler.schedule(resolve, delayMs);
      this.stopRetryWait = () => {
        cancel();
        resolve();
      };
    });
    this.stopRetryWait = undefined;
  }

  /** How many new entries to read: what the consumers able to take one have permits for. */
  private readCapacity(): number {
    if (this.pending.blocked || this.replay.size >= this.limits.maxReplayPositions) return 0;
    let permits = 0;
    for (const c of this.consumers) if (c.canTake()) permits += c.permits;
    if (permits === 0) return 0;
    // Permits count messages and reads count entries: batches of N need N times fewer entries (Pulsar's avgBatchSizePerMsg).
    const entries = Math.max(1, Math.floor(permits / this.messagesPerEntry));
    return Math.min(entries, this.limits.maxReadBatchEntries);
  }

  /** Replay positions some consumer can take now, in position order, within permits. */
  private pickReplay(): ReplayItem[] {
    if (this.replay.size === 0 || this.pending.blocked) return [];
    const budgets = new Map<ConsumerState<E>, number>();
    let total = 0;
    for (const c of this.consumers) {
      if (!c.canTake()) continue;
      budgets.set(c, c.permits);
      total += c.permits;
    }
    const picked: ReplayItem[] = [];
    const stuck = new Set<number>();
    const keyShared = this.subscriptionType === SubscriptionType.KEY_SHARED;
    for (const item of this.replay.sorted()) {
      if (total <= 0 || picked.length >= this.limits.maxReadBatchEntries) break;
      if (!keyShared) {
        picked.push(item);
        total -= item.numMessages;
        continue;
      }
      if (stuck.has(item.keyHash)) continue;
      const target = this.keySharedTarget(item.keyHash);
      const budget = target === undefined ? 0 : (budgets.get(target) ?? 0);
      if (target === undefined || budget <= 0) {
        stuck.add(item.keyHash);
        continue;
      }
      budgets.set(target, budget - item.numMessages);
      total -= item.numMessages;
      picked.push(item);
    }
    return picked;
  }

  /** Delivers what it can of `items`; returns how many left the replay queue. */
  private dispatchReplayed(items: readonly ReplayItem[], entries: readonly E[]): { done: number; unread: number } {
    let done = 0;
    let unread = 0;
    const byKey = new Map(entries.map((e) => [positionKey(e.position.ledgerId, e.position.entryId), e]));
    const stuck = new Set<number>();
    // Exclusive and Failover keep order: once one entry stays behind, the later ones do too.
    const inOrder =
      this.subscriptionType === SubscriptionType.EXCLUSIVE || this.subscriptionType === SubscriptionType.FAILOVER;
    for (const item of items) {
      if (!this.replay.has(item.position)) continue;
      if (this.source.isAcknowledged(item.position)) {
        this.replay.remove(item.position);
        this.counts.forget(item.position);
        done++;
        continue;
      }
      const entry = byKey.get(positionKey(item.position.ledgerId, item.position.entryId));
      // Unacknowledged and not returned: the read failed, since a cursor's unconsumed entries are never trimmed.
      const target = entry === undefined ? undefined : this.chooseConsumer(entry.position, item.keyHash, stuck, true);
      if (entry === undefined) unread++;
      if (entry === undefined || target === undefined) {
        stuck.add(item.keyHash);
        if (inOrder) break;
        continue;
      }
      this.replay.remove(item.position);
      this.deliverOrDeadLetter(target, entry, item.keyHash);
      done++;
    }
    return { done, unread };
  }

  private dispatchNew(entries: readonly E[]): void {
    let messages = 0;
    for (const entry of entries) messages += entry.numMessages;
    this.messagesPerEntry = messages / entries.length;
    const keyShared = this.subscriptionType === SubscriptionType.KEY_SHARED;
    const stuck = new Set<number>();
    for (const entry of entries) {
      const keyHash = keyShared ? stickyKeyHash(entry.key) : -1;
      const target = this.chooseConsumer(entry.position, keyHash, stuck, false);
      if (target === undefined) {
        stuck.add(keyHash);
        this.replay.add({ position: entry.position, key: entry.key, keyHash, numMessages: entry.numMessages });
        continue;
      }
      this.deliverOrDeadLetter(target, entry, keyHash);
    }
  }

  /**
   * Who gets this entry now, if anyone. Exclusive and Failover keep order:
   * a new entry waits while older ones wait for redelivery. Key_Shared keeps
   * order per key: an entry waits while an older one of its hash waits, or
   * while another consumer still holds unacked entries of its hash.
   */
  private chooseConsumer(
    position: Position,
    keyHash: number,
    stuck: ReadonlySet<number>,
    fromReplay: boolean,
  ): ConsumerState<E> | undefined {
    if (this.pending.blocked) return undefined;
    switch (this.subscriptionType) {
      case SubscriptionType.EXCLUSIVE:
      case SubscriptionType.FAILOVER: {
        if (!fromReplay && this.replay.size > 0) return undefined;
        const active = this.activeConsumer;
        return active?.canTake() ? active : undefined;
      }
      case SubscriptionType.SHARED:
        return this.nextSharedConsumer();
      case SubscriptionType.KEY_SHARED: {
        if (stuck.has(keyHash)) return undefined;
        if (fromReplay) {
          const lowest = this.replay.lowestForHash(keyHash);
          if (lowest !== undefined && comparePositions(lowest, position) < 0) return undefined;
        } else if (this.replay.hasHash(keyHash)) {
          return undefined;
        }
        const target = this.keySharedTarget(keyHash);
        return target?.canTake() ? target : undefined;
      }
      default:
        return undefined;
    }
  }

  /** The consumer a hash belongs to, unless another one still drains unacked entries of it. */
  private keySharedTarget(keyHash: number): ConsumerState<E> | undefined {
    const selected = this.selector.select(keyHash);
    const holder = this.pending.holderOfHash(keyHash);
    return holder === undefined || holder === selected ? selected : undefined;
  }

  private nextSharedConsumer(): ConsumerState<E> | undefined {
    const n = this.consumers.length;
    for (let i = 0; i < n; i++) {
      const index = (this.roundRobin + i) % n;
      const c = this.consumers[index] as ConsumerState<E>;
      if (c.canTake()) {
        this.roundRobin = (index + 1) % n;
        return c;
      }
    }
    return undefined;
  }

  private deliverOrDeadLetter(c: ConsumerState<E>, entry: E, keyHash: number): void {
    const policy = c.options.deadLetterPolicy;
    if (policy !== undefined && this.counts.get(entry.position) > policy.maxRedeliveries) {
      this.sendToDeadLetter(entry, keyHash, policy);
      return;
    }
    this.deliver(c, entry, keyHash);
  }

  private deliver(c: ConsumerState<E>, entry: E, keyHash: number): void {
    const p = entry.position;
    const redeliveryCount = this.counts.recordDelivery(p);
    const batchIndexes = entry.numMessages > 1 ? this.source.unackedBatchIndexes?.(p, entry.numMessages) : undefined;
    const messages = batchIndexes?.length ?? entry.numMessages;
    const item: PendingItem = {
      position: p,
      key: entry.key,
      keyHash,
      numMessages: entry.numMessages,
      unackedMessages: messages,
      deliveredAtMs: this.scheduler.now(),
      deliverySeq: ++this.deliverySeq,
    };
    c.permits -= messages;
    this.pending.add(c, item);
    c.rate.record(messages, entry.sizeBytes);
    this.rate.record(messages, entry.sizeBytes);
    if (redeliveryCount > 0) {
      c.redeliveredMessages += messages;
      this.redeliveredMessages += messages;
    }
    this.timers.delivered(c);
    this.callSink(c, () => c.options.sink.deliver({ entry, redeliveryCount, batchIndexes }));
  }

  private callSink(c: ConsumerState<E>, call: () => void): void {
    try {
      call();
    } catch (err) {
      // A transport that cannot take the call has lost its consumer: what it held goes to the others.
      this.options.onError?.(LedgerlineError.from(err, SubscriptionReason.CONSUMER_SINK_FAILED));
      if (!c.closed && !this.closed) queueMicrotask(() => this.removeConsumer(c));
    }
  }

  private sendToDeadLetter(entry: E, keyHash: number, policy: DeadLetterPolicy): void {
    const publish = this.options.deadLetter as DeadLetterPublisher<E>;
    const p = entry.position;
    const epoch = this.epoch;
    const done = async () => {
      await publish(entry, policy);
      if (epoch === this.epoch) await this.source.ack([p]);
    };
    done().then(
      () => {
        this.counts.forget(p);
        this.settle(p);
        this.wake();
      },
      (err: unknown) => {
        this.options.onError?.(LedgerlineError.from(err, SubscriptionReason.DEAD_LETTER_FAILED));
        this.scheduler.schedule(() => {
          if (this.closed || epoch !== this.epoch || this.source.isAcknowledged(p)) return;
          this.replay.add({ position: p, key: entry.key, keyHash, numMessages: entry.numMessages });
          this.wake();
        }, DEAD_LETTER_RETRY_DELAY_MS);
      },
    );
  }

  // ---- pending bookkeeping ----

  /** Puts a consumer's unacked entries back for delivery to whoever can take them. */
  private release(c: ConsumerState<E>, positions: readonly Position[]): void {
    for (const p of positions) {
      const item = this.pending.remove(p, c);
      if (item === undefined) continue;
      const { position, key, keyHash, unackedMessages } = item;
      this.replay.add({ position, key, keyHash, numMessages: unackedMessages });
    }
    this.wake();
  }

  /** An acknowledged position: no longer pending anywhere nor waiting for redelivery. */
  private settle(p: Position): void {
    this.pending.remove(p);
    this.replay.remove(p);
    this.counts.forget(p);
  }

  private settleUpTo(p: Position): void {
    for (const position of this.pending.positionsUpTo(p)) this.settle(position);
    this.replay.removeUpTo(p);
  }

  private afterBatchAck(p: Position, ackedCount: number): void {
    if (this.source.isAcknowledged(p)) {
      this.settle(p);
      return;
    }
    const item = this.pending.holderOf(p)?.pending.get(positionKey(p.ledgerId, p.entryId));
    if (item === undefined) return;
    const remaining = this.source.unackedBatchIndexes?.(p, item.numMessages);
    this.pending.setUnacked(p, Math.max(1, remaining?.length ?? item.unackedMessages - ackedCount));
  }

  private forgetDeliveries(): void {
    for (const c of this.consumers) {
      for (const item of [...c.pending.values()]) this.pending.remove(item.position, c);
      c.stopTimers();
    }
    this.replay.clear();
  }

  // ---- failover ----

  /**
   * Failover: the active consumer is Pulsar's pick, the first by priority
   * level then name (or the partitionIndex-th). On a switch the previous one
   * hands back what it had not acknowledged, for the new one to get.
   * `joining` is not told by activeChanged: its Subscribed reply says it.
   */
  private electActive(joining: ConsumerState<E> | undefined): void {
    const ordered = [...this.consumers].sort(
      (a, b) =>
        a.options.priorityLevel - b.options.priorityLevel ||
        (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) ||
        a.id - b.id,
    );
    const next = ordered.length === 0 ? undefined : ordered[(this.options.partitionIndex ?? 0) % ordered.length];
    const previous = this.activeConsumer;
    if (next === previous) return;
    this.activeConsumer = next;
    if (previous !== undefined && !previous.closed) {
      previous.active = false;
      this.release(
        previous,
        [...previous.pending.values()].map((item) => item.position),
      );
      this.callSink(previous, () => previous.options.sink.activeChanged(false));
    }
    if (next !== undefined) {
      next.active = true;
      if (next !== joining) this.callSink(next, () => next.options.sink.activeChanged(true));
    }
  }

  // ---- checks ----

  private checkOpen(): void {
    if (this.closed) throw subscriptionClosedError(this.name);
  }

  private checkConsumer(c: ConsumerState<E>): void {
    this.checkOpen();
    if (c.closed) throw consumerClosedError(c.name);
  }
}
