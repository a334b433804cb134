import { comparePositions, positionKey, type CheckedEntryAcks, type Position } from '@ledgerline/cursor-codec';
import { invalidArgument } from '@ledgerline/errors';
import { SubscriptionReason } from '../errors.js';
import type { DispatchEntry, SeekTarget, SubscriptionSource } from '../types.js';

/** An entry of the in-memory log. */
export interface TestEntry extends DispatchEntry {
  /** Offset of its first message. */
  readonly offset: number;
}

/**
 * A subscription source over an in-memory log of one ledger (ledger id 1),
 * with the cursor semantics of ManagedCursor: individual, cumulative and
 * batch-index acks, mark-delete advancing over contiguous acks, a read
 * position skipping acknowledged entries, seek. It counts reads so tests can
 * check that each entry is read once for all consumers.
 */
export class InMemorySource implements SubscriptionSource<TestEntry> {
  static readonly LEDGER_ID = 1;
  readonly entries: TestEntry[] = [];
  /** Entries returned by readEntries, in total. */
  newEntriesRead = 0;
  /** Positions returned by readPositions, in total. */
  positionsReread = 0;
  private markDelete = -1;
  private readonly acked = new Set<number>();
  private readonly batchAcks = new Map<number, Set<number>>();
  private readIndex = 0;
  private nextOffset = 0;
  private waiters = new Set<() => void>();
  private gate: Promise<void> | undefined;
  private held = 0;
  /** Set to make the next reads fail with this error. */
  failReads: Error | undefined;

  /**
   * @param readsTakeATurn reads resolve on a later turn of the event loop (as
   * a store read does), so tests can act while a read is in flight.
   */
  constructor(private readonly readsTakeATurn = false) {}

  /** Appends an entry (a batch when numMessages > 1) and wakes a waiting reader. */
  append(key?: string, numMessages = 1, sizeBytes = 100): TestEntry {
    const entry: TestEntry = {
      position: { ledgerId: InMemorySource.LEDGER_ID, entryId: this.entries.length },
      numMessages,
      sizeBytes,
      key,
      offset: this.nextOffset,
    };
    this.nextOffset += numMessages;
    this.entries.push(entry);
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const wake of waiters) wake();
    return entry;
  }

  appendMany(keys: readonly (string | undefined)[]): TestEntry[] {
    return keys.map((key) => this.append(key));
  }

  /** Whether a reader is parked in waitForEntries. */
  get waiting(): boolean {
    return this.waiters.size > 0;
  }

  async readEntries(maxEntries: number): Promise<TestEntry[]> {
    await this.readLatency();
    if (this.failReads !== undefined) throw this.failReads;
    const out: TestEntry[] = [];
    while (this.readIndex < this.entries.length && out.length < maxEntries) {
      const entry = this.entries[this.readIndex++] as TestEntry;
      if (!this.isAcknowledged(entry.position)) out.push(entry);
    }
    this.newEntriesRead += out.length;
    return out;
  }

  waitForEntries(signal: AbortSignal): Promise<void> {
    if (this.readIndex < this.entries.length || signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const wake = () => {
        this.waiters.delete(wake);
        signal.removeEventListener('abort', wake);
        resolve();
      };
      this.waiters.add(wake);
      signal.addEventListener('abort', wake, { once: true });
    });
  }

  async readPositions(positions: readonly Position[]): Promise<TestEntry[]> {
    await this.readLatency();
    if (this.failReads !== undefined) throw this.failReads;
    const out = positions
      .map((p) => this.entries[p.entryId])
      .filter((e): e is TestEntry => e !== undefined && !this.isAcknowledged(e.position));
    this.positionsReread += out.length;
    return out;
  }

  ack({ positions, ranges }: CheckedEntryAcks): void {
    // Every entry checked before any is acknowledged, as the managed cursor does.
    const indexes = positions.map((p) => this.indexOf(p));
    for (const r of ranges) {
      this.indexOf({ ledgerId: r.ledgerId, entryId: r.firstEntryId });
      this.indexOf({ ledgerId: r.ledgerId, entryId: r.lastEntryId });
    }
    for (const index of indexes) this.ackIndex(index);
    for (const r of ranges) for (let index = r.firstEntryId; index <= r.lastEntryId; index++) this.ackIndex(index);
    this.advance();
  }

  ackCumulative(position: Position): void {
    const index = this.indexOf(position);
    for (let i = this.markDelete + 1; i <= index; i++) this.ackIndex(i);
    this.advance();
  }

  ackBatchIndexes(position: Position, indexes: readonly number[], batchSize: number): void {
    const index = this.indexOf(position);
    if (this.isAcknowledged(position)) return;
    const entry = this.entries[index] as TestEntry;
    if (batchSize !== entry.numMessages) throw invalidArgument(SubscriptionReason.INVALID_ACK, 'batch size mismatch');
    let acked = this.batchAcks.get(index);
    if (acked === undefined) this.batchAcks.set(index, (acked = new Set()));
    for (const i of indexes) acked.add(i);
    if (acked.size === batchSize) this.ackIndex(index);
    this.advance();
  }

  isAcknowledged(p: Position): boolean {
    return p.ledgerId === InMemorySource.LEDGER_ID && (p.entryId <= this.markDelete || this.acked.has(p.entryId));
  }

  unackedBatchIndexes(p: Position, numMessages: number): readonly number[] | undefined {
    const acked = this.batchAcks.get(p.entryId);
    if (acked === undefined) return undefined;
    return Array.from({ length: numMessages }, (_, i) => i).filter((i) => !acked.has(i));
  }

  async seek(target: SeekTarget): Promise<Position> {
    await Promise.resolve();
    let index: number;
    if ('position' in target) index = target.position.entryId;
    else if ('offset' in target) {
      index = this.entries.findIndex((e) => e.offset + e.numMessages > target.offset);
      if (index < 0) index = this.entries.length;
    } else
      throw invalidArgument(SubscriptionReason.INVALID_SEEK_TARGET, 'the in-memory source seeks by position or offset');
    this.markDelete = index - 1;
    this.acked.clear();
    this.batchAcks.clear();
    this.readIndex = index;
    return { ledgerId: InMemorySource.LEDGER_ID, entryId: index };
  }

  async backlog(): Promise<number> {
    let messages = 0;
    for (let i = this.markDelete + 1; i < this.entries.length; i++) {
      if (this.acked.has(i)) continue;
      messages += (this.entries[i] as TestEntry).numMessages - (this.batchAcks.get(i)?.size ?? 0);
    }
    return messages;
  }

  markDeletePosition(): Position {
    return { ledgerId: InMemorySource.LEDGER_ID, entryId: this.markDelete };
  }

  /** Every entry acknowledged? */
  allAcknowledged(): boolean {
    return this.markDelete === this.entries.length - 1;
  }

  /**
   * Holds every read from now on until the returned function is called, so a
   * test can act while a read is in flight.
   */
  holdReads(): () => void {
    let release = () => {};
    this.gate = new Promise<void>((resolve) => (release = resolve));
    return () => {
      this.gate = undefined;
      release();
    };
  }

  /** Reads waiting at a holdReads gate. */
  get heldReads(): number {
    return this.held;
  }

  private async readLatency(): Promise<void> {
    if (this.gate !== undefined) {
      this.held++;
      await this.gate;
      this.held--;
    }
    if (this.readsTakeATurn) await new Promise((resolve) => setImmediate(resolve));
    else await Promise.resolve();
  }

  private indexOf(p: Position): number {
    if (p.ledgerId !== InMemorySource.LEDGER_ID || p.entryId < 0 || p.entryId >= this.entries.length) {
      throw invalidArgument(SubscriptionReason.INVALID_ACK, `no entry at ${positionKey(p.ledgerId, p.entryId)}`);
    }
    return p.entryId;
  }

  private ackIndex(index: number): void {
    if (index > this.markDelete) this.acked.add(index);
    this.batchAcks.delete(index);
  }

  private advance(): void {
    while (this.acked.has(this.markDelete + 1)) this.acked.delete(++this.markDelete);
    // Reads never return what is already consumed.
    if (comparePositions({ ledgerId: 1, entryId: this.readIndex }, { ledgerId: 1, entryId: this.markDelete }) <= 0) {
      this.readIndex = this.markDelete + 1;
    }
  }
}
