import type { Position } from '@ledgerline/cursor-codec';
import type { ConsumerState } from './consumer-state.js';
import type { ReplayItem, ReplayQueue } from './replay-queue.js';
import type { DispatchEntry } from './types.js';

/**
 * Who gets which entry, for one subscription type (Pulsar has a dispatcher
 * class per type too): the single active consumer of Exclusive and Failover,
 * round robin for Shared, the hash ring for Key_Shared. Entry dispatch asks
 * the dispatcher of the subscription's current type; reading, delivering and
 * redelivering are the same for every type.
 */
export interface Dispatcher<E extends DispatchEntry> {
  /** Whether one replayed entry held back holds back every later one too (the type keeps the topic's order). */
  readonly keepsOrder: boolean;
  /** The hash an entry is dispatched by: its sticky key hash for Key_Shared, -1 for the other types. */
  keyHash(key: string | undefined): number;
  /** A consumer joined; it is among the subscription's consumers already. */
  consumerAdded(c: ConsumerState<E>): void;
  /** A consumer left; it is no longer among the subscription's consumers, and what it held is released. */
  consumerRemoved(c: ConsumerState<E>): void;
  /**
   * Who gets this entry now, if anyone. `stuck` holds the hashes held back
   * earlier in the same pass; `fromReplay` says it is delivered again.
   */
  select(
    position: Position,
    keyHash: number,
    stuck: ReadonlySet<number>,
    fromReplay: boolean,
  ): ConsumerState<E> | undefined;
  /** Replay positions some consumer can take now, in position order, within permits: at most `maxEntries`. */
  pickReplay(maxEntries: number): ReplayItem[];
}

/** Replay positions in position order, up to what the consumers able to take one have permits for together. */
export function pickReplayWithinPermits<E extends DispatchEntry>(
  replay: ReplayQueue,
  consumers: readonly ConsumerState<E>[],
  maxEntries: number,
): ReplayItem[] {
  let total = 0;
  for (const c of consumers) if (c.canTake()) total += c.permits;
  const picked: ReplayItem[] = [];
  for (const item of replay.sorted()) {
    if (total <= 0 || picked.length >= maxEntries) break;
    picked.push(item);
    total -= item.numMessages;
  }
  return picked;
}
