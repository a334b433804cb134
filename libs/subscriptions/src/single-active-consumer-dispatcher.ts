import type { Position } from '@ledgerline/cursor-codec';
import type { ConsumerState } from './consumer-state.js';
import { pickReplayWithinPermits, type Dispatcher } from './dispatcher.js';
import type { ReplayItem, ReplayQueue } from './replay-queue.js';
import { SubscriptionType, type DispatchEntry } from './types.js';

/** What the Failover switch asks of the subscription. */
export interface ActiveConsumerHandover<E extends DispatchEntry> {
  /** Puts everything `c` has not acknowledged back for delivery to whoever can take it. */
  releaseAll(c: ConsumerState<E>): void;
  /** Calls `c`'s sink; a sink that throws loses its consumer. */
  callSink(c: ConsumerState<E>, call: () => void): void;
}

/**
 * Exclusive and Failover (Pulsar's PersistentDispatcherSingleActiveConsumer):
 * one consumer receives, in the topic's order. Exclusive has one consumer;
 * Failover keeps the others on standby and elects the active one again
 * whenever a consumer joins or leaves.
 */
export class SingleActiveConsumerDispatcher<E extends DispatchEntry> implements Dispatcher<E> {
  readonly keepsOrder = true;
  private activeConsumer: ConsumerState<E> | undefined;

  constructor(
    private readonly type: typeof SubscriptionType.EXCLUSIVE | typeof SubscriptionType.FAILOVER,
    private readonly consumers: readonly ConsumerState<E>[],
    private readonly replay: ReplayQueue,
    /** Failover on a partition: the active consumer is the (partitionIndex mod n)th in Pulsar's order. */
    private readonly partitionIndex: number,
    private readonly handover: ActiveConsumerHandover<E>,
  ) {}

  keyHash(): number {
    return -1;
  }

  consumerAdded(c: ConsumerState<E>): void {
    if (this.type === SubscriptionType.FAILOVER) {
      this.electActive(c);
      return;
    }
    c.active = true;
    this.activeConsumer = c;
  }

  consumerRemoved(c: ConsumerState<E>): void {
    if (this.activeConsumer === c) this.activeConsumer = undefined;
    if (this.type === SubscriptionType.FAILOVER) this.electActive(undefined);
  }

  /** A new entry waits while older ones wait for redelivery, so the active consumer gets them in order. */
  select(
    _position: Position,
    _keyHash: number,
    _stuck: ReadonlySet<number>,
    fromReplay: boolean,
  ): ConsumerState<E> | undefined {
    if (!fromReplay && this.replay.size > 0) return undefined;
    const active = this.activeConsumer;
    return active?.canTake() ? active : undefined;
  }

  pickReplay(maxEntries: number): ReplayItem[] {
    return pickReplayWithinPermits(this.replay, this.consumers, maxEntries);
  }

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
    const next = ordered.length === 0 ? undefined : ordered[this.partitionIndex % ordered.length];
    const previous = this.activeConsumer;
    if (next === previous) return;
    this.activeConsumer = next;
    if (previous !== undefined && !previous.closed) {
      previous.active = false;
      this.handover.releaseAll(previous);
      this.handover.callSink(previous, () => previous.options.sink.activeChanged(false));
    }
    if (next !== undefined) {
      next.active = true;
      if (next !== joining) this.handover.callSink(next, () => next.options.sink.activeChanged(true));
    }
  }
}
