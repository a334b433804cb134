import type { ConsumerState } from './consumer-state.js';
import { pickReplayWithinPermits, type Dispatcher } from './dispatcher.js';
import type { ReplayItem, ReplayQueue } from './replay-queue.js';
import type { DispatchEntry } from './types.js';

/**
 * Shared (Pulsar's PersistentDispatcherMultipleConsumers): every consumer
 * receives, each entry going to the next consumer in turn that can take one,
 * with no order kept between entries.
 */
export class MultipleConsumersDispatcher<E extends DispatchEntry> implements Dispatcher<E> {
  readonly keepsOrder = false;
  private roundRobin = 0;

  constructor(
    private readonly consumers: readonly ConsumerState<E>[],
    private readonly replay: ReplayQueue,
  ) {}

  keyHash(): number {
    return -1;
  }

  consumerAdded(c: ConsumerState<E>): void {
    c.active = true;
  }

  consumerRemoved(): void {
    // The turn goes on from where it was: the next pick wraps around the shorter list.
  }

  select(): ConsumerState<E> | undefined {
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

  pickReplay(maxEntries: number): ReplayItem[] {
    return pickReplayWithinPermits(this.replay, this.consumers, maxEntries);
  }
}
