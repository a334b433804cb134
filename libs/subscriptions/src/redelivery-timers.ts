import { positionKey, type Position } from '@ledgerline/cursor-codec';
import type { ConsumerState } from './consumer-state.js';
import type { Scheduler } from './scheduler.js';
import type { DispatchEntry } from './types.js';

/**
 * Ack timeouts and nack delays, one timer per consumer for each: a consumer's
 * pending entries are in delivery order, which is the order their timeouts
 * expire in, and its nacks in the order they fall due (its delay is fixed).
 */
export class RedeliveryTimers<E extends DispatchEntry> {
  constructor(
    private readonly scheduler: Scheduler,
    /** Hands positions a consumer holds back for redelivery. */
    private readonly release: (c: ConsumerState<E>, positions: readonly Position[]) => void,
  ) {}

  /** After a delivery to `c`: makes sure its oldest pending entry has a timeout running. */
  delivered(c: ConsumerState<E>): void {
    if (c.options.ackTimeoutMs === 0 || c.cancelAckTimer !== undefined || c.closed) return;
    const first = c.pending.values().next();
    if (first.done === true) return;
    const dueMs = first.value.deliveredAtMs + c.options.ackTimeoutMs;
    c.cancelAckTimer = this.scheduler.schedule(
      () => {
        c.cancelAckTimer = undefined;
        this.expire(c);
      },
      Math.max(0, dueMs - this.scheduler.now()),
    );
  }

  /** Redelivers `positions` after the consumer's nack delay; `lastDeliverySeq` is the last delivery the nack can mean. */
  nacked(c: ConsumerState<E>, positions: Position[], lastDeliverySeq: number): void {
    const delayMs = c.options.nackRedeliveryDelayMs;
    if (delayMs === 0) {
      this.release(c, positions);
      return;
    }
    c.nacks.push({ dueMs: this.scheduler.now() + delayMs, lastDeliverySeq, positions });
    this.scheduleNacks(c);
  }

  private expire(c: ConsumerState<E>): void {
    if (c.closed) return;
    const deadline = this.scheduler.now() - c.options.ackTimeoutMs;
    const expired: Position[] = [];
    for (const item of c.pending.values()) {
      if (item.deliveredAtMs > deadline) break;
      expired.push(item.position);
    }
    this.release(c, expired);
    this.delivered(c);
  }

  private scheduleNacks(c: ConsumerState<E>): void {
    const head = c.nacks[0];
    if (c.cancelNackTimer !== undefined || head === undefined || c.closed) return;
    c.cancelNackTimer = this.scheduler.schedule(
      () => {
        c.cancelNackTimer = undefined;
        this.redeliverNacked(c);
      },
      Math.max(0, head.dueMs - this.scheduler.now()),
    );
  }

  private redeliverNacked(c: ConsumerState<E>): void {
    if (c.closed) return;
    const now = this.scheduler.now();
    for (let due = c.nacks[0]; due !== undefined && due.dueMs <= now; due = c.nacks[0]) {
      c.nacks.shift();
      const lastDeliverySeq = due.lastDeliverySeq;
      // A position delivered again since the nack (after a timeout, a redeliver request) is not what the nack meant.
      const stillMeant = due.positions.filter((p) => {
        const item = c.pending.get(positionKey(p.ledgerId, p.entryId));
        return item !== undefined && item.deliverySeq <= lastDeliverySeq;
      });
      this.release(c, stillMeant);
    }
    this.scheduleNacks(c);
  }
}
