import type { MessageInitShape } from '@bufbuild/protobuf';
import type { EntrySchema, PublishMessage } from '@ledgerline/proto';

type EntryInit = MessageInitShape<typeof EntrySchema>;

/** One stored entry of a fake topic. */
export interface StoredEntry {
  readonly ledgerId: bigint;
  readonly entryId: bigint;
  readonly firstOffset: bigint;
  readonly lastOffset: bigint;
  readonly timestampMs: bigint;
  readonly producerName: string;
  readonly sequenceId: bigint;
  readonly messages: readonly {
    payload: Uint8Array;
    key: string | undefined;
    properties: Record<string, string>;
    eventTimeMs: bigint;
  }[];
}

/** A fake topic: entries in one ledger, continuous offsets, deduplication by producer name. */
export class FakeTopic {
  readonly entries: StoredEntry[] = [];
  private readonly highestSequence = new Map<string, bigint>();
  private readonly waiters = new Set<() => void>();
  ledgerId = 1n;
  clock: () => number = Date.now;
  /** Retention removed every offset below this one: fetches below it are refused OFFSET_TRIMMED, as an owner does. */
  earliestOffset = 0n;

  get nextOffset(): bigint {
    return this.entries.length === 0 ? 0n : this.entries[this.entries.length - 1]!.lastOffset + 1n;
  }

  /** Stores an entry unless it is a duplicate; returns the stored entry and whether it was one. */
  append(message: PublishMessage): { entry: StoredEntry | undefined; duplicate: boolean } {
    const count = message.messages.length === 0 ? 1 : message.messages.length;
    const lastSequence = message.sequenceId + BigInt(count - 1);
    if (message.producerName !== '') {
      const highest = this.highestSequence.get(message.producerName);
      if (highest !== undefined && lastSequence <= highest) {
        const original = this.entries.find(
          (entry) => entry.producerName === message.producerName && entry.sequenceId === message.sequenceId,
        );
        return { entry: original, duplicate: true };
      }
      this.highestSequence.set(message.producerName, lastSequence);
    }
    const messages =
      message.messages.length === 0
        ? [
            {
              payload: message.payload,
              key: message.key,
              properties: message.properties,
              eventTimeMs: message.eventTimeMs,
            },
          ]
        : message.messages.map((each) => ({
            payload: each.payload,
            key: each.key,
            properties: each.properties,
            eventTimeMs: each.eventTimeMs,
          }));
    const firstOffset = this.nextOffset;
    const entry: StoredEntry = {
      ledgerId: this.ledgerId,
      entryId: BigInt(this.entries.length),
      firstOffset,
      lastOffset: firstOffset + BigInt(count - 1),
      timestampMs: BigInt(this.clock()),
      producerName: message.producerName,
      sequenceId: message.sequenceId,
      messages,
    };
    this.entries.push(entry);
    for (const wake of [...this.waiters]) wake();
    return { entry, duplicate: false };
  }

  /** Resolves at the next append, or after `ms`, or when `signal` aborts. */
  waitForAppend(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Listens to appends until the returned function is called. */
  onAppend(listener: () => void): () => void {
    this.waiters.add(listener);
    return () => this.waiters.delete(listener);
  }

  /** The index of the entry holding `offset` (or the first after it); entries.length past the end. */
  indexOfOffset(offset: bigint): number {
    const index = this.entries.findIndex((entry) => entry.lastOffset >= offset);
    return index === -1 ? this.entries.length : index;
  }

  /** The wire form of an entry, leaving out the batch indexes in `skip`. */
  wireEntry(index: number, redeliveryCount: number, skip: ReadonlySet<number> = new Set()): EntryInit {
    const entry = this.entries[index]!;
    const batched = entry.messages.length > 1;
    return {
      position: { ledgerId: entry.ledgerId, entryId: entry.entryId },
      firstOffset: entry.firstOffset,
      lastOffset: entry.lastOffset,
      brokerTimestampMs: entry.timestampMs,
      numMessages: entry.messages.length,
      redeliveryCount,
      messages: entry.messages.flatMap((message, batchIndex) =>
        skip.has(batchIndex)
          ? []
          : [
              {
                payload: message.payload,
                ...(message.key === undefined ? {} : { key: message.key }),
                properties: message.properties,
                eventTimeMs: message.eventTimeMs,
                publishTimeMs: entry.timestampMs,
                producerName: entry.producerName,
                sequenceId: entry.sequenceId + BigInt(batchIndex),
                offset: entry.firstOffset + BigInt(batchIndex),
                batchIndex: batched ? batchIndex : -1,
              },
            ],
      ),
    };
  }
}
