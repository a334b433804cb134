import type { Position } from '@ledgerline/cursor-codec';
import { RateMeter } from './rate-meter.js';
import type { ConsumerSink, ConsumerStats, DeadLetterPolicy, DispatchEntry, SubscriptionType } from './types.js';

/** An entry delivered to a consumer and not yet acknowledged. */
export interface PendingItem {
  readonly position: Position;
  readonly key: string | undefined;
  readonly keyHash: number;
  readonly numMessages: number;
  /** Messages of it not yet acknowledged (fewer than numMessages after batch-index acks). */
  unackedMessages: number;
  readonly deliveredAtMs: number;
  /** Deliveries by the subscription are numbered: a nack applies to deliveries up to its own number only. */
  readonly deliverySeq: number;
}

export interface ResolvedConsumerOptions<E extends DispatchEntry> {
  name: string;
  type: SubscriptionType;
  sink: ConsumerSink<E>;
  priorityLevel: number;
  ackTimeoutMs: number;
  nackRedeliveryDelayMs: number;
  deadLetterPolicy: DeadLetterPolicy | undefined;
}

/** Nacked positions waiting for their delay; they cover deliveries numbered up to `lastDeliverySeq`. */
export interface NackRecord {
  dueMs: number;
  lastDeliverySeq: number;
  positions: Position[];
}

/** What the subscription keeps per consumer; only the subscription changes it. */
export class ConsumerState<E extends DispatchEntry> {
  /** In order of delivery, which is the order ack timeouts expire in. */
  readonly pending = new Map<string, PendingItem>();
  unackedMessages = 0;
  permits = 0;
  blocked = false;
  active = false;
  closed = false;
  redeliveredMessages = 0;
  readonly rate: RateMeter;
  cancelAckTimer: (() => void) | undefined;
  /** Nacks waiting for their delay, in order of due time (the delay is fixed per consumer). */
  readonly nacks: NackRecord[] = [];
  cancelNackTimer: (() => void) | undefined;

  constructor(
    readonly id: number,
    /** The name this consumer takes on the Key_Shared hash ring (its name, made unique). */
    readonly ringName: string,
    readonly options: ResolvedConsumerOptions<E>,
    now: () => number,
  ) {
    this.rate = new RateMeter(now);
  }

  get name(): string {
    return this.options.name;
  }

  /** Whether dispatch may send this consumer another entry now. */
  canTake(): boolean {
    return this.active && !this.closed && !this.blocked && this.permits > 0;
  }

  stats(): ConsumerStats {
    return {
      name: this.name,
      unackedMessages: this.unackedMessages,
      availablePermits: this.permits,
      blockedOnUnacked: this.blocked,
      msgRateOut: this.rate.messagesPerSecond,
      msgThroughputOut: this.rate.bytesPerSecond,
      redeliveredMessages: this.redeliveredMessages,
      active: this.active,
    };
  }

  stopTimers(): void {
    this.cancelAckTimer?.();
    this.cancelAckTimer = undefined;
    this.cancelNackTimer?.();
    this.cancelNackTimer = undefined;
    this.nacks.length = 0;
  }
}
