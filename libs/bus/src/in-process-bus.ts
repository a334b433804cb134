import { LedgerlineError } from '@ledgerline/errors';
import { BoundedSubscription, resolveSubscribeOptions } from './bounded-subscription.js';
import {
  DEFAULT_MAX_PAYLOAD_BYTES,
  MAX_SUBSCRIPTIONS,
  type Bus,
  type BusStats,
  type BusSubscription,
  type SubscribeOptions,
} from './bus.js';
import { checkPayload, busClosedError, BusReason } from './bus-errors.js';
import { validateSubject, validateSubjectPattern } from './subject-syntax.js';
import { SubscriptionIndex } from './subscription-index.js';

export interface InProcessBusOptions {
  /** Largest payload accepted; default DEFAULT_MAX_PAYLOAD_BYTES. */
  maxPayloadBytes?: number;
  /** Subscriptions held at once; default MAX_SUBSCRIPTIONS. */
  maxSubscriptions?: number;
}

/**
 * The bus of standalone mode: subscribers in this process only. It keeps the
 * NATS contract exactly (same subject rules, same wildcards, same bounded
 * per-subscription buffer and at-most-once delivery), so code tested against
 * it behaves the same on NATS.
 */
export class InProcessBus implements Bus {
  private readonly index = new SubscriptionIndex<BoundedSubscription>();
  private readonly live = new Set<BoundedSubscription>();
  private readonly maxPayloadBytes: number;
  private readonly maxSubscriptions: number;
  private closed = false;
  private readonly counters = { published: 0, delivered: 0, publishDropped: 0, subscriberDropped: 0 };

  constructor(options: InProcessBusOptions = {}) {
    this.maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    this.maxSubscriptions = options.maxSubscriptions ?? MAX_SUBSCRIPTIONS;
  }

  async publish(subject: string, data: Uint8Array): Promise<void> {
    if (this.closed) throw busClosedError();
    const tokens = validateSubject(subject);
    checkPayload(data, this.maxPayloadBytes);
    // One copy per publish, as a network transport would make: later changes by the publisher are not seen.
    const message = { subject, data: Uint8Array.prototype.slice.call(data) };
    this.counters.published++;
    for (const subscription of this.index.match(tokens)) {
      if (subscription.push(message)) this.counters.delivered++;
    }
  }

  subscribe(pattern: string, options?: SubscribeOptions): BusSubscription {
    if (this.closed) throw busClosedError();
    const tokens = validateSubjectPattern(pattern);
    const resolved = resolveSubscribeOptions(options);
    if (this.index.size >= this.maxSubscriptions) {
      throw new LedgerlineError(
        'RESOURCE_EXHAUSTED',
        BusReason.TOO_MANY_SUBSCRIPTIONS,
        `the bus already holds ${this.maxSubscriptions} subscriptions; unsubscribe unused ones`,
      );
    }
    const subscription = new BoundedSubscription(pattern, resolved, (ended, dropped) => {
      this.index.remove(tokens, ended);
      this.live.delete(ended);
      this.counters.subscriberDropped += dropped;
    });
    this.index.add(tokens, subscription);
    this.live.add(subscription);
    return subscription;
  }

  /** Delivery is synchronous, so everything published before this call is already in the buffers. */
  async flush(): Promise<void> {}

  stats(): BusStats {
    let liveDropped = 0;
    for (const subscription of this.live) liveDropped += subscription.dropped;
    return {
      ...this.counters,
      subscriberDropped: this.counters.subscriberDropped + liveDropped,
      connected: !this.closed,
      disconnects: 0,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const subscription of [...this.live]) subscription.unsubscribe();
  }
}
