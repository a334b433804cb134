import { comparePositions, type CheckedEntryAcks, type Position } from '@ledgerline/cursor-codec';
import type { ManagedCursor, ManagedLedger } from '@ledgerline/managed-ledger';
import { writerEntry, type WriterEntry } from '@ledgerline/ownership';
import type { SeekTarget, SubscriptionSource } from '@ledgerline/subscriptions';
import type { OwnedTopic } from './owned-topic.js';

/** What a source needs to know of its topic: whether a transfer is closing the ledger under it. */
export type HandOverState = Pick<OwnedTopic, 'handingOver' | 'afterHandOver'>;

/** A topic that is not moving: nothing is ever held. */
const NOT_MOVING: HandOverState = { handingOver: false, afterHandOver: () => Promise.resolve() };

/**
 * The subscriptions lib's source over a ManagedCursor and its managed
 * ledger: reads from the cursor's read position (the entry cache when
 * tailing, the ledger store when catching up), redelivery reads by position,
 * acks into the cursor. While a transfer closes the ledger, a read that fails
 * waits for the transfer to end (by then its consumers have been told where
 * the topic went, NOT_OWNER), and an ack that finds the cursor closed is left
 * for the client to send again to the next owner (it sends unconfirmed acks again).
 */
export class CursorSource implements SubscriptionSource<WriterEntry> {
  constructor(
    private readonly ledger: ManagedLedger,
    readonly cursor: ManagedCursor,
    private readonly topic: HandOverState = NOT_MOVING,
  ) {}

  private async guarded<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      if (this.topic.handingOver) await this.topic.afterHandOver();
      throw error;
    }
  }

  private acking(ack: () => void): void {
    try {
      ack();
    } catch (error) {
      if (!this.topic.handingOver) throw error;
    }
  }

  async readEntries(maxEntries: number): Promise<WriterEntry[]> {
    const entries = await this.guarded(() => this.cursor.readEntries({ maxEntries }));
    return entries.map(writerEntry);
  }

  waitForEntries(signal: AbortSignal): Promise<void> {
    const last = this.ledger.lastConfirmedPosition();
    if (last !== undefined && comparePositions(this.cursor.readPositionNow, last) <= 0) return Promise.resolve();
    if (this.ledger.state === 'closed' || this.ledger.state === 'deleted') return Promise.resolve();
    // An abort is the subscription ending the wait; any other failure is a read failure it retries or reports.
    return this.guarded(() => this.ledger.waitForEntries({ signal })).then(
      () => undefined,
      (error: unknown) => {
        if (!signal.aborted) throw error;
      },
    );
  }

  async readPositions(positions: readonly Position[]): Promise<WriterEntry[]> {
    const found: WriterEntry[] = [];
    for (const position of positions) {
      if (this.cursor.isAcknowledged(position)) continue;
      // A failed read is thrown, not skipped: the subscription retries it in order and reports why.
      const [entry] = await this.guarded(() => this.ledger.readEntries(position, { maxEntries: 1 }));
      if (entry !== undefined && comparePositions(entry.position, position) === 0) found.push(writerEntry(entry));
    }
    return found;
  }

  ack({ positions, ranges }: CheckedEntryAcks): void {
    this.acking(() => this.cursor.ack(positions, ranges));
  }

  ackCumulative(position: Position): void {
    this.acking(() => this.cursor.ackCumulative(position));
  }

  ackBatchIndexes(position: Position, indexes: readonly number[], batchSize: number): void {
    this.acking(() => this.cursor.ackBatchIndexes(position, indexes, batchSize));
  }

  isAcknowledged(position: Position): boolean {
    return this.cursor.isAcknowledged(position);
  }

  unackedBatchIndexes(position: Position, numMessages: number): readonly number[] | undefined {
    const acked = this.cursor.ackedBatchIndexes(position);
    if (acked === undefined) return undefined;
    const done = new Set(acked);
    return Array.from({ length: numMessages }, (_, i) => i).filter((i) => !done.has(i));
  }

  seek(target: SeekTarget): Promise<Position> {
    return this.guarded(() => this.cursor.seek(target));
  }

  backlog(): Promise<number> {
    return this.guarded(() => this.cursor.backlog());
  }

  markDeletePosition(): Position {
    return this.cursor.markDeletePosition;
  }
}
