import { codeName, LedgerlineError } from '@ledgerline/errors';
import type { PublishMessageSchema, PublishRequestSchema, PublishResponse, PublishResult } from '@ledgerline/proto';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { AsyncQueue } from './async-queue.js';
import {
  BatchBuilder,
  MESSAGE_OVERHEAD_BYTES,
  publishMessageOf,
  type BatchLimits,
  type OutgoingMessage,
} from './batch-builder.js';
import type { ClientContext } from './client-context.js';
import { ClientReason, REROUTE_REASONS } from './client-reason.js';
import { rerouteAfter, withReconnect } from './reconnect.js';

type PublishRequestInit = MessageInitShape<typeof PublishRequestSchema>;
type PublishMessageInit = MessageInitShape<typeof PublishMessageSchema>;

/**
 * The most entries one coalesced request carries, whatever the owner announces,
 * and the most bytes (estimated as the entries' sizes): well under the gRPC
 * message limit (4 MiB), so coalescing never makes a request the transport refuses.
 * An entry larger than the byte bound goes alone, as it would uncoalesced.
 */
export const MAX_COALESCED_ENTRIES = 1_000;
export const MAX_COALESCED_BYTES = 1024 * 1024;

/** An entry sent (or to be sent) and not yet answered. */
interface PendingEntry {
  readonly sequenceId: bigint;
  readonly message: PublishMessageInit;
  readonly messages: readonly OutgoingMessage[];
  /** The entry's estimated encoded size, as the coalescing byte bound counts it. */
  readonly sizeBytes: number;
}

/** A Publish stream being written: its requests and what its owner said it reads per request. */
interface OpenStream {
  readonly requests: AsyncQueue<PublishRequestInit>;
  readonly abort: AbortController;
  /** Entries per request; 1 until the owner announces more (an older owner never does). */
  maxEntriesPerRequest: number;
}

/**
 * Publishes to one topic (or one partition) over one Publish stream. Entries
 * keep their sequence ids for life: when the stream breaks, or the owner
 * answers NOT_OWNER or TOPIC_UNLOADED, the producer reconnects (to the owner
 * the refusal names, else after a fresh lookup) and resends every entry not
 * yet acknowledged, in order; the owner's deduplication (producer name and
 * sequence id) skips those it had already stored, so nothing is stored twice.
 *
 * Every entry queued within one turn of the event loop goes out in one
 * request (up to the owner's announced limit and MAX_COALESCED_*), without
 * waiting for a timer: each keeps its own sequence id, receipt and failure.
 */
export class PartitionProducer {
  private readonly pending: PendingEntry[] = [];
  /** pending[0 .. sent) are written to the current stream; the rest wait for the next flush. */
  private sent = 0;
  private flushScheduled: NodeJS.Immediate | undefined;
  /** Resolved as entries are answered: flush() waits for the answers of what was queued before it. */
  private answered = 0n;
  private queued = 0n;
  private readonly answeredWaiters: Array<{ upTo: bigint; resolve: () => void }> = [];
  private readonly batch: BatchBuilder | undefined;
  private batchTimer: NodeJS.Timeout | undefined;
  private stream: OpenStream | undefined;
  private loop: Promise<void> | undefined;
  private closing = false;

  constructor(
    private readonly context: ClientContext,
    readonly topic: string,
    readonly partition: number,
    private readonly producerName: string,
    private nextSequenceId: bigint,
    private readonly batching: BatchLimits | undefined,
    private readonly closedError: () => LedgerlineError | undefined,
  ) {
    this.batch = batching === undefined ? undefined : new BatchBuilder(batching);
  }

  /** Opens the stream ahead of the first message, so the first send does not pay for the connection. */
  start(): void {
    this.ensureLoop();
  }

  /** Queues one message: into the current batch, or as an entry of its own without batching. */
  add(message: OutgoingMessage): void {
    if (this.batch === undefined) {
      this.enqueue([message]);
      return;
    }
    if (!this.batch.fits(message)) this.flushBatch();
    if (this.batch.add(message)) this.flushBatch();
    else if (this.batchTimer === undefined) {
      this.batchTimer = setTimeout(() => this.flushBatch(), this.batching!.maxDelayMs);
    }
  }

  /** Sends the current batch now. */
  flushBatch(): void {
    if (this.batchTimer !== undefined) clearTimeout(this.batchTimer);
    this.batchTimer = undefined;
    if (this.batch !== undefined && this.batch.count > 0) this.enqueue(this.batch.take());
  }

  /** Resolves once every entry queued so far is answered (stored or refused). */
  async flush(): Promise<void> {
    this.flushBatch();
    if (this.answered >= this.queued) return;
    const upTo = this.queued;
    await new Promise<void>((resolve) => this.answeredWaiters.push({ upTo, resolve }));
  }

  /** Flushes, then ends the stream once nothing is pending. */
  async close(): Promise<void> {
    await this.flush();
    this.closing = true;
    this.stream?.requests.end();
    await this.loop;
  }

  private enqueue(messages: OutgoingMessage[]): void {
    const sequenceId = this.nextSequenceId;
    this.nextSequenceId += BigInt(messages.length);
    const message = publishMessageOf(this.topic, this.producerName, sequenceId, messages);
    let sizeBytes = MESSAGE_OVERHEAD_BYTES + this.topic.length + this.producerName.length;
    for (const outgoing of messages) sizeBytes += outgoing.sizeBytes;
    this.pending.push({ sequenceId, message, messages, sizeBytes });
    this.queued++;
    if (this.stream !== undefined && this.flushScheduled === undefined) {
      // Not a timer: runs once this turn of the event loop is done, so everything queued in it shares a request.
      this.flushScheduled = setImmediate(() => {
        this.flushScheduled = undefined;
        this.writeQueued();
      });
    }
    this.ensureLoop();
  }

  /** Writes every entry not yet on the current stream, as few requests as the limits allow. */
  private writeQueued(): void {
    const stream = this.stream;
    if (stream === undefined) return;
    const maxEntries = Math.min(stream.maxEntriesPerRequest, MAX_COALESCED_ENTRIES);
    while (this.sent < this.pending.length) {
      const first = this.pending[this.sent++]!;
      if (maxEntries <= 1) {
        stream.requests.push({ message: first.message });
        continue;
      }
      const more: PublishMessageInit[] = [];
      let sizeBytes = first.sizeBytes;
      while (this.sent < this.pending.length && more.length + 1 < maxEntries) {
        const next = this.pending[this.sent]!;
        if (sizeBytes + next.sizeBytes > MAX_COALESCED_BYTES) break;
        sizeBytes += next.sizeBytes;
        more.push(next.message);
        this.sent++;
      }
      stream.requests.push(more.length === 0 ? { message: first.message } : { message: first.message, more });
    }
  }

  private ensureLoop(): void {
    if (this.loop !== undefined) return;
    this.loop = this.connectionLoop().finally(() => {
      this.loop = undefined;
      // Entries queued while the loop was giving up get a loop of their own.
      if (this.pending.length > 0 && this.closedError() === undefined) this.ensureLoop();
    });
  }

  private needsConnection(): boolean {
    return this.pending.length > 0 || (!this.closing && this.closedError() === undefined);
  }

  private async connectionLoop(): Promise<void> {
    while (this.needsConnection()) {
      try {
        await withReconnect(this.context.reconnect, this.topic, this.context.lookup, this.closedError, () =>
          this.runStream(),
        );
      } catch (error) {
        this.failPending(LedgerlineError.from(error));
        return;
      }
    }
  }

  /**
   * One stream's life. Resolves when it ended after answering something (the
   * loop then reconnects at once, with a fresh attempt budget) or when the
   * producer closed; throws when it failed before answering anything.
   */
  private async runStream(): Promise<void> {
    if (!this.needsConnection()) return;
    const route = await this.context.lookup.route(this.topic);
    const abort = new AbortController();
    const requests = new AsyncQueue<PublishRequestInit>();
    const connections = this.context.connections;
    const responses = connections
      .to(route.address)
      .topics.publish(requests, connections.callOptions(undefined, abort.signal));
    this.stream = { requests, abort, maxEntriesPerRequest: 1 };
    // Every entry not yet answered is (re)sent on the new stream, in order.
    this.sent = 0;
    this.writeQueued();
    if (this.closing && this.pending.length === 0) requests.end();
    let answered = false;
    try {
      for await (const response of responses) {
        this.onResponse(response);
        answered = true;
        if (this.closing && this.pending.length === 0) requests.end();
      }
      if (!this.needsConnection()) return;
      throw new LedgerlineError(
        'UNAVAILABLE',
        ClientReason.STREAM_ENDED,
        `the owner of ${this.topic} ended the publish stream`,
      );
    } catch (error) {
      if (answered && rerouteAfter(error, this.topic, this.context.lookup)) return;
      throw error;
    } finally {
      this.stream = undefined;
      requests.end();
      abort.abort();
    }
  }

  private onResponse(response: PublishResponse): void {
    const stream = this.stream;
    if (stream !== undefined && response.maxMessagesPerRequest > stream.maxEntriesPerRequest) {
      stream.maxEntriesPerRequest = response.maxMessagesPerRequest;
    }
    try {
      this.onResult(response.result);
      for (const more of response.more) this.onResult(more.result);
    } finally {
      this.notifyAnswered();
    }
  }

  /** One entry's answer: the oldest entry in flight is stored, refused, or (thrown) to be resent elsewhere. */
  private onResult(result: PublishResult['result']): void {
    const entry = this.pending[0];
    const sequenceId = result.value?.sequenceId;
    if (entry === undefined || this.sent === 0 || sequenceId !== entry.sequenceId) {
      throw new LedgerlineError(
        'INTERNAL',
        ClientReason.PROTOCOL_VIOLATION,
        `the owner of ${this.topic} answered sequence id ${String(sequenceId)}, expected ${String(entry?.sequenceId)}`,
      );
    }
    if (result.case === 'failure') {
      const failure = result.value;
      const error = new LedgerlineError(codeName(failure.code), failure.reason, failure.message, {
        details: { ...failure.details, topic: this.topic },
      });
      // Not stored because the topic is elsewhere: leave it pending, reconnect and resend.
      if (REROUTE_REASONS.has(failure.reason) || error.code === 'UNAVAILABLE') throw error;
      this.settleOldest();
      for (const message of entry.messages) message.reject(error);
      return;
    }
    const receipt = result.value!;
    this.settleOldest();
    const known = receipt.position !== undefined;
    const batched = entry.messages.length > 1;
    const ledgerId = receipt.position?.ledgerId ?? -1n;
    const entryId = receipt.position?.entryId ?? -1n;
    for (let index = 0; index < entry.messages.length; index++) {
      entry.messages[index]!.resolve({
        messageId: { ledgerId, entryId, batchIndex: batched ? index : -1, partition: this.partition },
        offset: known ? receipt.firstOffset + BigInt(index) : -1n,
        duplicate: receipt.duplicate,
      });
    }
  }

  private settleOldest(): void {
    this.pending.shift();
    this.sent--;
    this.answered++;
  }

  private notifyAnswered(): void {
    while (this.answeredWaiters.length > 0 && this.answeredWaiters[0]!.upTo <= this.answered) {
      this.answeredWaiters.shift()!.resolve();
    }
  }

  private failPending(error: LedgerlineError): void {
    const failed = this.pending.splice(0);
    this.sent = 0;
    this.answered += BigInt(failed.length);
    for (const entry of failed) {
      for (const message of entry.messages) message.reject(error);
    }
    this.notifyAnswered();
  }

  /** Fails everything queued (the client or producer closed without flushing). */
  abandon(error: LedgerlineError): void {
    if (this.batchTimer !== undefined) clearTimeout(this.batchTimer);
    this.batchTimer = undefined;
    if (this.flushScheduled !== undefined) clearImmediate(this.flushScheduled);
    this.flushScheduled = undefined;
    for (const message of this.batch?.take() ?? []) message.reject(error);
    this.failPending(error);
    this.closing = true;
    this.stream?.abort.abort();
  }
}
