import { comparePositions, type Position } from '@ledgerline/cursor-codec';
import type { ConsumerState } from './consumer-state.js';
import type { Dispatcher } from './dispatcher.js';
import type { PendingAcks } from './pending-acks.js';
import type { ReplayItem, ReplayQueue } from './replay-queue.js';
import { StickyKeyConsumerSelector, stickyKeyHash } from './sticky-key-selector.js';
import type { DispatchEntry } from './types.js';

/**
 * Key_Shared (Pulsar's PersistentStickyKeyDispatcherMultipleConsumers):
 * every consumer receives, each key hash going to the consumer the hash ring
 * gives it, in order per key: an entry waits while an older one of its hash
 * waits, or while another consumer still holds unacked entries of its hash.
 */
export class StickyKeyDispatcher<E extends DispatchEntry> implements Dispatcher<E> {
  readonly keepsOrder = false;
  private readonly selector: StickyKeyConsumerSelector<ConsumerState<E>>;

  constructor(
    private readonly consumers: readonly ConsumerState<E>[],
    private readonly replay: ReplayQueue,
    private readonly pending: PendingAcks<E>,
    hashRingPoints: number,
  ) {
    this.selector = new StickyKeyConsumerSelector(hashRingPoints);
  }

  keyHash(key: string | undefined): number {
    return stickyKeyHash(key);
  }

  consumerAdded(c: ConsumerState<E>): void {
    this.selector.add(c, c.ringName);
    c.active = true;
  }

  consumerRemoved(c: ConsumerState<E>): void {
    this.selector.remove(c);
  }

  select(
    position: Position,
    keyHash: number,
    stuck: ReadonlySet<number>,
    fromReplay: boolean,
  ): ConsumerState<E> | undefined {
    if (stuck.has(keyHash)) return undefined;
    if (fromReplay) {
      const lowest = this.replay.lowestForHash(keyHash);
      if (lowest !== undefined && comparePositions(lowest, position) < 0) return undefined;
    } else if (this.replay.hasHash(keyHash)) {
      return undefined;
    }
    const target = this.target(keyHash);
    return target?.canTake() ? target : undefined;
  }

  /** Within each target consumer's own permits: a hash whose consumer has none holds back its later positions. */
  pickReplay(maxEntries: number): ReplayItem[] {
    const budgets = new Map<ConsumerState<E>, number>();
    let total = 0;
    for (const c of this.consumers) {
      if (!c.canTake()) continue;
      budgets.set(c, c.permits);
      total += c.permits;
    }
    const picked: ReplayItem[] = [];
    const stuck = new Set<number>();
    for (const item of this.replay.sorted()) {
      if (total <= 0 || picked.length >= maxEntries) break;
      if (stuck.has(item.keyHash)) continue;
      const target = this.target(item.keyHash);
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

  /** The consumer a hash belongs to, unless another one still drains unacked entries of it. */
  private target(keyHash: number): ConsumerState<E> | undefined {
    const selected = this.selector.select(keyHash);
    const holder = this.pending.holderOfHash(keyHash);
    return holder === undefined || holder === selected ? selected : undefined;
  }
}
