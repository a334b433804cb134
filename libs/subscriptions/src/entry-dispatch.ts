import { positionKey, type EntryPosition, type Position } from '@ledgerline/cursor-codec';
import { LedgerlineError } from '@ledgerline/errors';
import type { ConsumerState, PendingItem } from './consumer-state.js';
import type { DeliveryCounts } from './delivery-counts.js';
import type { Dispatcher } from './dispatcher.js';
import { SubscriptionReason } from './errors.js';
import { DEAD_LETTER_RETRY_DELAY_MS, type SubscriptionLimits } from './limits.js';
import type { PendingAcks } from './pending-acks.js';
import { RateMeter } from './rate-meter.js';
import type { ReadTarget } from './read-loop.js';
import type { RedeliveryTimers } from './redelivery-timers.js';
import type { ReplayItem, ReplayQueue } from './replay-queue.js';
import type { Scheduler } from './scheduler.js';
import type { DeadLetterPolicy, DeadLetterPublisher, DispatchEntry, SubscriptionSource } from './types.js';

/** The subscription's state entry dispatch works on, and what it asks of the subscription. */
export interface EntryDispatchContext<E extends DispatchEntry> {
  readonly source: SubscriptionSource<E>;
  readonly scheduler: Scheduler;
  readonly limits: SubscriptionLimits;
  readonly consumers: readonly ConsumerState<E>[];
  readonly pending: PendingAcks<E>;
  readonly replay: ReplayQueue;
  readonly counts: DeliveryCounts;
  readonly timers: RedeliveryTimers<E>;
  readonly deadLetter: DeadLetterPublisher<E> | undefined;
  /** The dispatcher of the subscription's type; undefined before its first consumer. */
  dispatcher(): Dispatcher<E> | undefined;
  /** The read loop's epoch, bumped by seek and close. */
  epoch(): number;
  closed(): boolean;
  /** Something changed that may let dispatch do more. */
  wake(): void;
  /** An acknowledged position: no longer pending anywhere nor waiting for redelivery. */
  settle(p: Position): void;
  /** Calls `c`'s sink; a sink that throws loses its consumer. */
  callSink(c: ConsumerState<E>, call: () => void): void;
  onError(error: LedgerlineError): void;
}

/**
 * Hands what the read loop read to the consumers: positions to replay in
 * position order, new entries in read order, each to the consumer the
 * dispatcher of the subscription's type picks (back to replay when nobody
 * can take it now), or to the dead-letter topic past its consumer's
 * redelivery limit. Counts what went out.
 */
export class EntryDispatch<E extends DispatchEntry> implements ReadTarget<E> {
  /** Messages out, per second, for the subscription's stats. */
  readonly rate: RateMeter;
  /** Messages delivered again (a redelivery count above 0), for the subscription's stats. */
  redeliveredMessages = 0;
  private deliverySeq = 0;
  /** Messages per entry in the last read, to turn permits (messages) into entries to read. */
  private messagesPerEntry = 1;

  constructor(private readonly context: EntryDispatchContext<E>) {
    this.rate = new RateMeter(() => context.scheduler.now());
  }

  /** The number of the last delivery: a nack made now applies to deliveries up to it only. */
  get lastDeliverySeq(): number {
    return this.deliverySeq;
  }

  waitsForNewEntriesOnly(): boolean {
    return this.context.replay.size === 0 && this.context.consumers.length > 0;
  }

  /** How many new entries to read: what the consumers able to take one have permits for. */
  readCapacity(): number {
    const { pending, replay, limits } = this.context;
    if (pending.blocked || replay.size >= limits.maxReplayPositions) return 0;
    let permits = 0;
    for (const c of this.context.consumers) if (c.canTake()) permits += c.permits;
    if (permits === 0) return 0;
    // Permits count messages and reads count entries: batches of N need N times fewer entries (Pulsar's avgBatchSizePerMsg).
    const entries = Math.max(1, Math.floor(permits / this.messagesPerEntry));
    return Math.min(entries, limits.maxReadBatchEntries);
  }

  /** Replay positions some consumer can take now, in position order, within permits. */
  pickReplay(): ReplayItem[] {
    const { pending, replay, limits } = this.context;
    if (replay.size === 0 || pending.blocked) return [];
    return this.context.dispatcher()?.pickReplay(limits.maxReadBatchEntries) ?? [];
  }

  /** Delivers what it can of `items`; returns how many left the replay queue. */
  dispatchReplayed(items: readonly ReplayItem[], entries: readonly E[]): { done: number; unread: number } {
    const { replay, source, counts } = this.context;
    let done = 0;
    let unread = 0;
    const byKey = new Map(entries.map((e) => [positionKey(e.position.ledgerId, e.position.entryId), e]));
    const stuck = new Set<number>();
    // Exclusive and Failover keep order: once one entry stays behind, the later ones do too.
    const inOrder = this.context.dispatcher()?.keepsOrder === true;
    for (const item of items) {
      if (!replay.has(item.position)) continue;
      if (source.isAcknowledged(item.position)) {
        replay.remove(item.position);
        counts.forget(item.position);
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
      replay.remove(item.position);
      this.deliverOrDeadLetter(target, entry, item.keyHash);
      done++;
    }
    return { done, unread };
  }

  dispatchNew(entries: readonly E[]): void {
    let messages = 0;
    for (const entry of entries) messages += entry.numMessages;
    this.messagesPerEntry = messages / entries.length;
    const dispatcher = this.context.dispatcher();
    const stuck = new Set<number>();
    for (const entry of entries) {
      const keyHash = dispatcher?.keyHash(entry.key) ?? -1;
      const target = this.chooseConsumer(entry.position, keyHash, stuck, false);
      if (target === undefined) {
        stuck.add(keyHash);
        this.context.replay.add({ position: entry.position, key: entry.key, keyHash, numMessages: entry.numMessages });
        continue;
      }
      this.deliverOrDeadLetter(target, entry, keyHash);
    }
  }

  /** Who gets this entry now, if anyone: nobody while the subscription is at its unacked bound. */
  private chooseConsumer(
    position: Position,
    keyHash: number,
    stuck: ReadonlySet<number>,
    fromReplay: boolean,
  ): ConsumerState<E> | undefined {
    if (this.context.pending.blocked) return undefined;
    return this.context.dispatcher()?.select(position, keyHash, stuck, fromReplay);
  }

  private deliverOrDeadLetter(c: ConsumerState<E>, entry: E, keyHash: number): void {
    const policy = c.options.deadLetterPolicy;
    if (policy !== undefined && this.context.counts.get(entry.position) > policy.maxRedeliveries) {
      this.sendToDeadLetter(entry, keyHash, policy);
      return;
    }
    this.deliver(c, entry, keyHash);
  }

  private deliver(c: ConsumerState<E>, entry: E, keyHash: number): void {
    const { source, scheduler, pending, counts, timers } = this.context;
    const p = entry.position;
    const redeliveryCount = counts.recordDelivery(p);
    const batchIndexes = entry.numMessages > 1 ? source.unackedBatchIndexes?.(p, entry.numMessages) : undefined;
    const messages = batchIndexes?.length ?? entry.numMessages;
    const item: PendingItem = {
      position: p,
      key: entry.key,
      keyHash,
      numMessages: entry.numMessages,
      unackedMessages: messages,
      deliveredAtMs: scheduler.now(),
      deliverySeq: ++this.deliverySeq,
    };
    c.permits -= messages;
    pending.add(c, item);
    c.rate.record(messages, entry.sizeBytes);
    this.rate.record(messages, entry.sizeBytes);
    if (redeliveryCount > 0) {
      c.redeliveredMessages += messages;
      this.redeliveredMessages += messages;
    }
    timers.delivered(c);
    this.context.callSink(c, () => c.options.sink.deliver({ entry, redeliveryCount, batchIndexes }));
  }

  private sendToDeadLetter(entry: E, keyHash: number, policy: DeadLetterPolicy): void {
    const context = this.context;
    const publish = context.deadLetter as DeadLetterPublisher<E>;
    const p = entry.position;
    const epoch = context.epoch();
    const done = async () => {
      await publish(entry, policy);
      // The position of an entry the source itself read: it names an entry, nothing from outside to check.
      if (epoch === context.epoch()) await context.source.ack({ positions: [p as EntryPosition], ranges: [] });
    };
    done().then(
      () => {
        context.counts.forget(p);
        context.settle(p);
        context.wake();
      },
      (err: unknown) => {
        context.onError(LedgerlineError.from(err, SubscriptionReason.DEAD_LETTER_FAILED));
        context.scheduler.schedule(() => {
          if (context.closed() || epoch !== context.epoch() || context.source.isAcknowledged(p)) return;
          context.replay.add({ position: p, key: entry.key, keyHash, numMessages: entry.numMessages });
          context.wake();
        }, DEAD_LETTER_RETRY_DELAY_MS);
      },
    );
  }
}
