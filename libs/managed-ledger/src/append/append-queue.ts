import type { AssignedOffsets } from '@ledgerline/offset-index';
import type { AppendListener } from '../entry.js';

/** One append from its call until the store holds it (or it fails). */
export interface AppendOp {
  payload: Uint8Array;
  numMessages: number;
  /** The largest event time of the entry's messages, as its publisher gave it (AppendOptions). */
  maxEventTimeMs?: number;
  /** Offsets, broker time and framed bytes are fixed the first time the op is sent and reused by every retry. */
  offsets?: AssignedOffsets;
  brokerTimestampMs?: number;
  framed?: Uint8Array;
  /** Told of the outcome, with the caller's `token` and `index`. */
  listener: AppendListener<unknown>;
  token: unknown;
  index: number;
}

/**
 * The appends not yet acknowledged, oldest first. The head ops are the ones
 * being written; they leave the queue only when confirmed or failed, so the
 * order in which appends resolve is the order of the queue.
 */
export class AppendQueue {
  private ops: AppendOp[] = [];
  private head = 0;
  private queuedBytes = 0;

  get length(): number {
    return this.ops.length - this.head;
  }

  get bytes(): number {
    return this.queuedBytes;
  }

  push(op: AppendOp): void {
    this.ops.push(op);
    this.queuedBytes += op.payload.byteLength;
  }

  /** The oldest ops, as many as fit in one write (at least one). */
  peekBatch(maxEntries: number, maxBytes: number): AppendOp[] {
    const batch: AppendOp[] = [];
    let bytes = 0;
    for (let i = this.head; i < this.ops.length && batch.length < maxEntries; i++) {
      const op = this.ops[i] as AppendOp;
      const size = op.framed?.byteLength ?? op.payload.byteLength;
      if (batch.length > 0 && bytes + size > maxBytes) break;
      batch.push(op);
      bytes += size;
    }
    return batch;
  }

  /** The op at the head, if any. */
  first(): AppendOp | undefined {
    return this.ops[this.head];
  }

  /** Removes the `count` oldest ops (they were confirmed or failed). */
  shift(count: number): AppendOp[] {
    const removed = this.ops.slice(this.head, this.head + count);
    this.head += removed.length;
    for (const op of removed) this.queuedBytes -= op.payload.byteLength;
    if (this.head > 1024 && this.head * 2 > this.ops.length) {
      this.ops = this.ops.slice(this.head);
      this.head = 0;
    }
    return removed;
  }

  /** True when some queued op already holds offsets (it was sent at least once). */
  anyAssigned(): boolean {
    return this.first()?.offsets !== undefined;
  }

  /** Removes and returns everything. */
  drain(): AppendOp[] {
    return this.shift(this.length);
  }
}
