import type { Bus, BusStats, BusSubscription, SubscribeOptions } from '@ledgerline/bus';

/** A bus that loses a share of what is published, as NATS core may: the collector must converge anyway. */
export class DroppingBus implements Bus {
  dropped = 0;
  constructor(
    private readonly inner: Bus,
    private readonly dropRate: number,
    private readonly random: () => number,
  ) {}
  async publish(subject: string, data: Uint8Array): Promise<void> {
    if (this.random() < this.dropRate) {
      this.dropped++;
      return;
    }
    await this.inner.publish(subject, data);
  }
  subscribe(pattern: string, options?: SubscribeOptions): BusSubscription {
    return this.inner.subscribe(pattern, options);
  }
  flush(): Promise<void> {
    return this.inner.flush();
  }
  stats(): BusStats {
    return this.inner.stats();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/** A small seeded generator (mulberry32), so a failing history replays from its seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
