import type { MessageInitShape } from '@bufbuild/protobuf';
import type { Ack, ConsumeResponseSchema, EntrySchema } from '@ledgerline/proto';
import { SubscriptionType } from '@ledgerline/proto';
import { LedgerlineError } from '@ledgerline/errors';
import { AsyncQueue } from '../async-queue.js';
import { ServiceReason } from '../client-reason.js';
import type { FakeTopic } from './fake-topic.js';

type ConsumeResponseInit = MessageInitShape<typeof ConsumeResponseSchema>;
type ConsumeEntryInit = MessageInitShape<typeof EntrySchema>;

/** One connected consumer of a fake subscription. */
export interface FakeConsumer {
  readonly name: string;
  readonly out: AsyncQueue<ConsumeResponseInit>;
  permits: number;
  /** Entries this consumer reads per response (Subscribe.max_entries_per_response; 0 or 1: one). */
  readonly maxEntriesPerResponse: number;
}

/**
 * A fake subscription: a read index, acknowledged entries and batch indexes,
 * entries delivered and not acknowledged (redelivered when their consumer
 * goes), and dispatch within each consumer's permits (Exclusive and Failover
 * to the first consumer, Shared and Key_Shared round-robin).
 */
export class FakeSubscription {
  /** How many entries each delivered response carried, in order (for assertions on coalescing). */
  readonly entriesPerResponse: number[] = [];
  readonly consumers: FakeConsumer[] = [];
  private readIndex: number;
  private readonly acked = new Map<number, Set<number> | 'all'>();
  private readonly deliveredTo = new Map<number, FakeConsumer>();
  private readonly redeliver: number[] = [];
  private readonly redeliveries = new Map<number, number>();
  private turn = 0;
  /** Every entry index delivered, in order, with its redelivery count (for assertions). */
  readonly deliveries: { index: number; redeliveryCount: number }[] = [];

  constructor(
    private readonly topic: FakeTopic,
    readonly type: SubscriptionType,
    startIndex: number,
  ) {
    this.readIndex = startIndex;
  }

  attach(consumer: FakeConsumer): void {
    if (this.type === SubscriptionType.EXCLUSIVE && this.consumers.length > 0) {
      throw new LedgerlineError(
        'FAILED_PRECONDITION',
        ServiceReason.CONSUMER_BUSY,
        'the exclusive subscription has a consumer',
      );
    }
    this.consumers.push(consumer);
  }

  detach(consumer: FakeConsumer): void {
    const at = this.consumers.indexOf(consumer);
    if (at >= 0) this.consumers.splice(at, 1);
    for (const [index, to] of [...this.deliveredTo]) {
      if (to === consumer) this.requeue(index);
    }
    this.dispatch();
  }

  /** Whether every message of entry `index` is acknowledged. */
  isAcked(index: number): boolean {
    const acked = this.acked.get(index);
    return acked === 'all' || (acked !== undefined && acked.size >= this.topic.entries[index]!.messages.length);
  }

  /** Entries not acknowledged. */
  get backlog(): number {
    return this.topic.entries.filter((_, index) => !this.isAcked(index)).length;
  }

  ack(ack: Ack): void {
    for (const position of ack.positions) this.ackWhole(Number(position.entryId));
    for (const range of ack.ranges) {
      for (let index = Number(range.firstEntryId); index <= Number(range.lastEntryId); index++) this.ackWhole(index);
    }
    if (ack.cumulative !== undefined) {
      for (let index = 0; index <= Number(ack.cumulative.entryId); index++) this.ackWhole(index);
    }
    for (const batchAck of ack.batchIndexAcks) {
      const index = Number(batchAck.position!.entryId);
      const current = this.acked.get(index);
      if (current === 'all') continue;
      const indexes = current ?? new Set<number>();
      for (const at of batchAck.ackedIndexes) indexes.add(at);
      this.acked.set(index, indexes);
      if (this.isAcked(index)) this.ackWhole(index);
    }
  }

  nack(entryIds: readonly bigint[]): void {
    for (const entryId of entryIds) this.requeue(Number(entryId));
    this.dispatch();
  }

  redeliverAll(consumer: FakeConsumer): void {
    for (const [index, to] of [...this.deliveredTo]) if (to === consumer) this.requeue(index);
    this.dispatch();
  }

  /** Moves the read position to entry `index`: everything before it acknowledged, nothing after it. */
  seek(index: number): void {
    this.acked.clear();
    for (let at = 0; at < index; at++) this.acked.set(at, 'all');
    this.deliveredTo.clear();
    this.redeliver.length = 0;
    this.readIndex = index;
    this.dispatch();
  }

  /** Delivers while permits last; what one consumer gets in one go shares responses, as an owner coalesces them. */
  dispatch(): void {
    const ready = new Map<FakeConsumer, ConsumeEntryInit[]>();
    this.dispatchInto(ready);
    for (const [consumer, entries] of ready) {
      const perResponse = Math.max(1, consumer.maxEntriesPerResponse);
      for (let at = 0; at < entries.length; at += perResponse) {
        const [first, ...more] = entries.slice(at, at + perResponse);
        this.entriesPerResponse.push(1 + more.length);
        consumer.out.push({ event: { case: 'entry', value: first! }, moreEntries: more });
      }
    }
  }

  private dispatchInto(ready: Map<FakeConsumer, ConsumeEntryInit[]>): void {
    for (;;) {
      const consumer = this.nextConsumer();
      if (consumer === undefined) return;
      const index = this.nextEntry();
      if (index === undefined) return;
      const skip = this.acked.get(index);
      const redeliveryCount = this.redeliveries.get(index) ?? 0;
      const entry = this.topic.wireEntry(index, redeliveryCount, skip === 'all' ? new Set() : skip);
      consumer.permits -= this.topic.entries[index]!.messages.length;
      this.deliveredTo.set(index, consumer);
      this.deliveries.push({ index, redeliveryCount });
      ready.set(consumer, [...(ready.get(consumer) ?? []), entry]);
    }
  }

  private ackWhole(index: number): void {
    this.acked.set(index, 'all');
    this.deliveredTo.delete(index);
  }

  private requeue(index: number): void {
    this.deliveredTo.delete(index);
    if (this.isAcked(index) || this.redeliver.includes(index)) return;
    this.redeliveries.set(index, (this.redeliveries.get(index) ?? 0) + 1);
    this.redeliver.push(index);
    this.redeliver.sort((a, b) => a - b);
  }

  private nextConsumer(): FakeConsumer | undefined {
    if (this.consumers.length === 0) return undefined;
    if (this.type === SubscriptionType.EXCLUSIVE || this.type === SubscriptionType.FAILOVER) {
      const first = this.consumers[0]!;
      return first.permits > 0 ? first : undefined;
    }
    for (let tried = 0; tried < this.consumers.length; tried++) {
      const consumer = this.consumers[this.turn++ % this.consumers.length]!;
      if (consumer.permits > 0) return consumer;
    }
    return undefined;
  }

  private nextEntry(): number | undefined {
    while (this.redeliver.length > 0) {
      const index = this.redeliver.shift()!;
      if (!this.isAcked(index)) return index;
    }
    while (this.readIndex < this.topic.entries.length) {
      const index = this.readIndex++;
      if (!this.isAcked(index)) return index;
    }
    return undefined;
  }
}
