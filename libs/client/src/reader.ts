import { LedgerlineError } from '@ledgerline/errors';
import type { Entry } from '@ledgerline/proto';
import { AsyncQueue } from './async-queue.js';
import { abandonPartitions, closePartitions } from './partition-set.js';
import { callOwner, partitionTopic, type ClientContext } from './client-context.js';
import { ClientReason, ServiceReason } from './client-reason.js';
import { messagesOfEntry, type Message } from './message.js';
import {
  choiceOption,
  DEFAULT_RECEIVER_QUEUE_SIZE,
  integerOption,
  invalidOption,
  MAX_ENTRY_SIZE_BYTES,
  MAX_RECEIVER_QUEUE_SIZE,
} from './options.js';

/** Where a reader starts: the first retained message, the end, an offset, or the first message stored at or after a time. */
export type ReaderStart = 'earliest' | 'latest' | { offset: number | bigint } | { timestamp: Date | number };

/** What a reader does when the offset it is to read next was already removed by retention. */
export type TrimmedOffsetPolicy = 'fail' | 'earliest';
export const TRIMMED_OFFSET_POLICIES: readonly TrimmedOffsetPolicy[] = ['fail', 'earliest'];

/** Options of `client.reader`. */
export interface ReaderOptions {
  /** The topic to read (all partitions of a partitioned topic, each from the same start). Required. */
  topic: string;
  /** Where to start. Default 'earliest'. An offset applies to each partition. */
  start?: ReaderStart;
  /** Messages fetched ahead of the application, per partition. Default 1000, from 1 to 100,000. */
  receiverQueueSize?: number;
  /**
   * When the offset to read next was already removed by retention (the owner
   * answers OUT_OF_RANGE / OFFSET_TRIMMED, `details.earliest_offset` naming
   * the earliest retained offset): 'fail' ends the reader with that error at
   * once (readNext and iteration throw it), 'earliest' goes on from the
   * earliest retained offset, skipping what was trimmed (Kafka's
   * auto.offset.reset none and earliest). Default: 'fail' for a reader
   * started at an `{ offset }`, which asked for exactly those messages;
   * 'earliest' for the other starts, which take whatever is retained.
   */
  onTrimmedOffset?: TrimmedOffsetPolicy;
}

/** Longest a fetch waits at the end of the topic for new entries before asking again. */
export const READER_MAX_WAIT_MS = 5_000;
/** Most entries one fetch asks for. */
export const READER_MAX_ENTRIES_PER_FETCH = 500;

interface Fetched {
  readonly message: Message;
  readonly from: PartitionReader;
}

type Start = 'earliest' | 'latest' | { offset: bigint } | { timestampMs: bigint };

/** The earliest retained offset an OFFSET_TRIMMED refusal names, if `error` is one. */
function earliestRetainedOffset(error: unknown): bigint | undefined {
  if (!LedgerlineError.is(error, ServiceReason.OFFSET_TRIMMED)) return undefined;
  const earliest = error.details['earliest_offset'] ?? '';
  return /^\d+$/.test(earliest) ? BigInt(earliest) : undefined;
}

function startOf(start: ReaderStart | undefined): Start {
  if (start === undefined || start === 'earliest' || start === 'latest') return start ?? 'earliest';
  if (typeof start === 'object' && start !== null && 'offset' in start) {
    const offset = start.offset;
    if (
      (typeof offset === 'bigint' && offset >= 0n) ||
      (typeof offset === 'number' && Number.isSafeInteger(offset) && offset >= 0)
    ) {
      return { offset: BigInt(offset) };
    }
    throw invalidOption('start.offset', 'must be a non-negative integer');
  }
  if (typeof start === 'object' && start !== null && 'timestamp' in start) {
    const ms = start.timestamp instanceof Date ? start.timestamp.getTime() : start.timestamp;
    if (!Number.isSafeInteger(ms) || ms < 0)
      throw invalidOption('start.timestamp', 'must be a Date or non-negative milliseconds');
    return { timestampMs: BigInt(ms) };
  }
  throw invalidOption('start', "must be 'earliest', 'latest', { offset } or { timestamp }");
}

/** Reads one partition by offset (Kafka-style fetches, no subscription). */
class PartitionReader {
  private offset = 0n;
  private queued = 0;
  /** Messages per entry in the last fetch; undefined before the first. */
  private messagesPerEntry: number | undefined;
  private room: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private readonly abort = new AbortController();

  constructor(
    private readonly context: ClientContext,
    readonly topic: string,
    readonly partition: number,
    private readonly receiverQueueSize: number,
    private readonly onTrimmedOffset: TrimmedOffsetPolicy,
    private readonly incoming: AsyncQueue<Fetched>,
    private readonly stopped: () => LedgerlineError | undefined,
  ) {}

  start(from: Start): void {
    this.loop = this.run(from).catch((error: unknown) => {
      if (this.stopped() === undefined) this.incoming.fail(LedgerlineError.from(error));
    });
  }

  taken(): void {
    this.queued--;
    if (this.queued < this.receiverQueueSize) {
      const wake = this.room;
      this.room = undefined;
      wake?.();
    }
  }

  /** Cancels the fetch in flight without waiting (the client is closing). */
  abandon(): void {
    this.abort.abort();
    this.room?.();
  }

  async close(): Promise<void> {
    // A fetch waiting at the end of the topic is cancelled rather than waited out.
    this.abort.abort();
    this.room?.();
    await this.loop;
  }

  private call<T>(call: Parameters<typeof callOwner<T>>[3]): Promise<T> {
    return callOwner(this.context, this.topic, this.stopped, call);
  }

  private async nextOffsetOfTopic(): Promise<bigint> {
    return (await this.call((clients, options) => clients.topics.getTopicStats({ topic: this.topic }, options)))
      .nextOffset;
  }

  private fetch(offset: bigint, maxEntries: number, maxWaitMs: number) {
    return this.call((clients, options) =>
      clients.topics.fetchByOffset(
        { topic: this.topic, offset, maxEntries, maxBytes: BigInt(MAX_ENTRY_SIZE_BYTES), maxWaitMs: BigInt(maxWaitMs) },
        { ...options, deadlineMs: this.context.operationTimeoutMs + maxWaitMs, signal: this.abort.signal },
      ),
    );
  }

  /**
   * The entries at the reader's offset. An offset retention removed fails the
   * reader, unless its policy is 'earliest': then the reader moves to the
   * earliest retained offset and this fetch returns nothing (the next one
   * reads from there).
   */
  private async fetchNext(waitMs: number): Promise<readonly Entry[]> {
    try {
      return (await this.fetch(this.offset, this.entriesWanted(), waitMs)).entries;
    } catch (error) {
      const earliest = this.onTrimmedOffset === 'earliest' ? earliestRetainedOffset(error) : undefined;
      // Only forward: an answer naming an offset at or before this one would loop.
      if (earliest === undefined || earliest <= this.offset) throw error;
      this.offset = earliest;
      return [];
    }
  }

  /**
   * The first offset whose entry was stored at or after `timestampMs` (the
   * next offset to be written when none was): one FindPosition call, which
   * the owner answers from the offset index with one read.
   */
  private async offsetAtTime(timestampMs: bigint): Promise<bigint> {
    const found = await this.call((clients, options) =>
      clients.topics.findPosition({ topic: this.topic, target: { case: 'timestampMs', value: timestampMs } }, options),
    );
    return found.offset;
  }

  /**
   * Entries to ask for: as many as the receiver queue has room for, in
   * messages. Entries may be batches of many messages, so the count follows
   * the messages per entry seen so far; the first fetch asks for one entry, so
   * a reader of a batched topic hands out its first message after one small
   * read instead of decoding hundreds of batches first.
   */
  private entriesWanted(): number {
    if (this.messagesPerEntry === undefined) return 1;
    const room = this.receiverQueueSize - this.queued;
    return Math.max(1, Math.min(READER_MAX_ENTRIES_PER_FETCH, Math.floor(room / this.messagesPerEntry)));
  }

  private learnBatchSize(entries: readonly Entry[]): void {
    if (entries.length === 0) return;
    const messages = entries.reduce((sum, entry) => sum + Math.max(1, entry.numMessages), 0);
    this.messagesPerEntry = messages / entries.length;
  }

  private async run(from: Start): Promise<void> {
    if (from === 'earliest') this.offset = 0n;
    else if (from === 'latest') this.offset = await this.nextOffsetOfTopic();
    else if ('offset' in from) this.offset = from.offset;
    else this.offset = await this.offsetAtTime(from.timestampMs);
    const waitMs = Math.min(READER_MAX_WAIT_MS, Math.floor(this.context.operationTimeoutMs / 2));
    while (this.stopped() === undefined) {
      if (this.queued >= this.receiverQueueSize) {
        await new Promise<void>((resolve) => (this.room = resolve));
        continue;
      }
      const entries = await this.fetchNext(waitMs);
      this.learnBatchSize(entries);
      for (const entry of entries) {
        for (const message of messagesOfEntry(entry, this.topic, this.partition)) {
          if (message.offset < this.offset) continue;
          this.queued++;
          this.incoming.push({ message, from: this });
        }
        if (entry.lastOffset + 1n > this.offset) this.offset = entry.lastOffset + 1n;
      }
    }
  }
}

/**
 * Reads a topic from a chosen start without a subscription: nothing is
 * acknowledged and nothing is kept for it. Iterate it with `for await`, or
 * call `readNext()`.
 */
export class Reader implements AsyncIterable<Message> {
  private readonly incoming = new AsyncQueue<Fetched>();
  private readonly partitions: PartitionReader[];
  private closed: LedgerlineError | undefined;

  /** @internal Use `client.reader(options)`. */
  constructor(
    private readonly context: ClientContext,
    /** The topic this reader reads. */
    readonly topic: string,
    partitionCount: number,
    options: ReaderOptions,
  ) {
    const start = startOf(options.start);
    const receiverQueueSize = integerOption(
      'receiverQueueSize',
      options.receiverQueueSize,
      DEFAULT_RECEIVER_QUEUE_SIZE,
      1,
      MAX_RECEIVER_QUEUE_SIZE,
    );
    const onTrimmedOffset = choiceOption<TrimmedOffsetPolicy>(
      'onTrimmedOffset',
      options.onTrimmedOffset,
      typeof start === 'object' && 'offset' in start ? 'fail' : 'earliest',
      TRIMMED_OFFSET_POLICIES,
    );
    const stopped = () => this.closed ?? context.closedError();
    this.partitions = Array.from(
      { length: Math.max(1, partitionCount) },
      (_, index) =>
        new PartitionReader(
          context,
          partitionTopic(topic, partitionCount, index),
          partitionCount === 0 ? -1 : index,
          receiverQueueSize,
          onTrimmedOffset,
          this.incoming,
          stopped,
        ),
    );
    for (const partition of this.partitions) partition.start(start);
  }

  /** The next message, waiting for one. Fails with READER_CLOSED once closed, or with why reading stopped. */
  async readNext(): Promise<Message> {
    const next = await this.next();
    if (next.done === true) throw this.closed ?? this.context.closedError() ?? this.closedError();
    return next.value;
  }

  /** Stops fetching; iteration ends. Closing twice is fine. */
  async close(): Promise<void> {
    if (this.closed !== undefined) return;
    this.closed = this.closedError();
    await closePartitions(this.incoming, this.partitions);
  }

  /** @internal Called by client.close(). */
  abandon(error: LedgerlineError): void {
    this.closed ??= error;
    abandonPartitions(this.incoming, this.partitions);
  }

  next(): Promise<IteratorResult<Message>> {
    if ((this.closed ?? this.context.closedError()) !== undefined)
      return Promise.resolve({ value: undefined, done: true });
    return this.incoming.next().then((result) => {
      if (result.done === true) return result;
      result.value.from.taken();
      return { value: result.value.message, done: false };
    });
  }

  [Symbol.asyncIterator](): AsyncIterator<Message> {
    return { next: () => this.next(), return: async () => ({ value: undefined, done: true }) };
  }

  private closedError(): LedgerlineError {
    return new LedgerlineError(
      'FAILED_PRECONDITION',
      ClientReason.READER_CLOSED,
      `the reader of ${this.topic} is closed`,
    );
  }
}
