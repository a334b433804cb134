import { comparePositions, type Position } from '@ledgerline/cursor-codec';
import type { ManagedCursor, ManagedLedger } from '@ledgerline/managed-ledger';
import { writerEntry, type WriterEntry } from '@ledgerline/ownership';
import type { SeekTarget, SubscriptionSource } from '@ledgerline/subscriptions';

/**
 * The subscriptions lib's source over a ManagedCursor and its managed
 * ledger: reads from the cursor's read position (the entry cache when
 * tailing, the ledger store when catching up), redelivery reads by position,
 * acks into the cursor.
 */
export class CursorSource implements SubscriptionSource<WriterEntry> {
  constructor(
    private readonly ledger: ManagedLedger,
    readonly cursor: ManagedCursor,
  ) {}

  async readEntries(maxEntries: number): Promise<WriterEntry[]> {
    const entries = await this.cursor.readEntries({ maxEntries });
    return entries.map(writerEntry);
  }

  waitForEntries(signal: AbortSignal): Promise<void> {
    const last = this.ledger.lastConfirmedPosition();
    if (last !== undefined && comparePositions(this.cursor.readPositionNow, last) <= 0) return Promise.resolve();
    if (this.ledger.state === 'closed' || this.ledger.state === 'deleted') return Promise.resolve();
    // An abort is the subscription ending the wait; any other failure is a read failure it retries or reports.
    return this.ledger.waitForEntries({ signal }).then(
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
      const [entry] = await this.ledger.readEntries(position, { maxEntries: 1 });
      if (entry !== undefined && comparePositions(entry.position, position) === 0) found.push(writerEntry(entry));
    }
    return found;
  }

  ack(positions: readonly Position[]): void {
    this.cursor.ack(positions);
  }

  ackCumulative(position: Position): void {
    this.cursor.ackCumulative(position);
  }

  ackBatchIndexes(position: Position, indexes: readonly number[], batchSize: number): void {
    this.cursor.ackBatchIndexes(position, indexes, batchSize);
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
    return this.cursor.seek(target);
  }

  backlog(): Promise<number> {
    return this.cursor.backlog();
  }

  markDeletePosition(): Position {
    return this.cursor.markDeletePosition;
  }
}
