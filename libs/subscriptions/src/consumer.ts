import type { EntryPosition, Position } from '@ledgerline/cursor-codec';
import type { ConsumerState } from './consumer-state.js';
import type { AckRequest, ConsumerStats, DispatchEntry, SubscriptionType } from './types.js';
import { checkAckRequest, checkPositions, type CheckedAck } from './validate.js';

/**
 * What a consumer calls on the subscription it belongs to (Subscription has every member; it makes
 * its consumers, so naming the class here would close a circle).
 */
export interface ConsumerHost<E extends DispatchEntry> {
  flow(consumer: ConsumerState<E>, permits: number): void;
  acknowledge(consumer: ConsumerState<E>, ack: CheckedAck): Promise<void>;
  nack(consumer: ConsumerState<E>, positions: readonly EntryPosition[]): void;
  redeliverUnacknowledged(consumer: ConsumerState<E>): void;
  consumerStats(consumer: ConsumerState<E>): ConsumerStats;
  removeConsumer(consumer: ConsumerState<E>): void;
}

/**
 * One connected consumer, as its transport holds it: what a Consume stream's
 * Flow, Ack, Nack and RedeliverUnacknowledged become, and close when the
 * stream ends. Calls after close fail FAILED_PRECONDITION / CONSUMER_CLOSED.
 */
export class Consumer<E extends DispatchEntry> {
  constructor(
    private readonly subscription: ConsumerHost<E>,
    private readonly state: ConsumerState<E>,
  ) {}

  get id(): number {
    return this.state.id;
  }

  get name(): string {
    return this.state.name;
  }

  get type(): SubscriptionType {
    return this.state.options.type;
  }

  /** Whether this consumer receives (always, but for a Failover standby); for the Subscribed reply. */
  get active(): boolean {
    return this.state.active;
  }

  get closed(): boolean {
    return this.state.closed;
  }

  /** Grants permits, in messages (a batch entry of N messages takes N). */
  flow(permits: number): void {
    this.subscription.flow(this.state, permits);
  }

  /**
   * Applies an Ack; resolves once the subscription's cursor has it (then an
   * AckReceipt may go out). Checked whole first, INVALID_ARGUMENT changing
   * nothing: this entry point is for callers in process (dead letters, tests,
   * benches); a transport checks where the request enters and calls
   * acknowledgeChecked.
   */
  acknowledge(ack: AckRequest): Promise<void> {
    try {
      return this.acknowledgeChecked(checkAckRequest(ack));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Applies an Ack checked where it entered (checkAckRequest), without checking it again. */
  acknowledgeChecked(ack: CheckedAck): Promise<void> {
    return this.subscription.acknowledge(this.state, ack);
  }

  /** Redelivers these entries (delivered to this consumer, unacked) after the nack delay; checked first, as acknowledge. */
  nack(positions: readonly Position[]): void {
    this.nackChecked(checkPositions(positions, 'nack'));
  }

  /** nack for positions checked where they entered (checkPositions). */
  nackChecked(positions: readonly EntryPosition[]): void {
    this.subscription.nack(this.state, positions);
  }

  /** Redelivers everything delivered to this consumer and not acknowledged. */
  redeliverUnacknowledged(): void {
    this.subscription.redeliverUnacknowledged(this.state);
  }

  stats(): ConsumerStats {
    return this.subscription.consumerStats(this.state);
  }

  /** Disconnects: what it had not acknowledged goes to the other consumers. Idempotent. */
  close(): void {
    this.subscription.removeConsumer(this.state);
  }
}
