import { codeName, LedgerlineError } from '@ledgerline/errors';
import type { PublishRequestSchema, PublishResponse } from '@ledgerline/proto';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { AsyncQueue } from './async-queue.js';
import { BatchBuilder, publishMessageOf, type BatchLimits, type OutgoingMessage } from './batch-builder.js';
import type { ClientContext } from './client-context.js';
import { ClientReason, REROUTE_REASONS } from './client-reason.js';
import { rerouteAfter, withReconnect } from './reconnect.js';

type PublishRequestInit = MessageInitShape<typeof PublishRequestSchema>;

/** An entry sent (or to be sent) and not yet answered. */
interface PendingEntry {
  readonly sequenceId: bigint;
  readonly request: PublishRequestInit;
  readonly messages: readonly OutgoingMessage[];
  readonly settled: Promise<void>;
  settle(): void;
}

/**
 * Publishes to one topic (or one partition) over one Publish stream. Entries
 * keep their sequence ids for life: when the stream breaks, or the owner
 * answers NOT_OWNER or TOPIC_UNLOADED, the producer reconnects (to the owner
 * the refusal names, else after a fresh lookup) and resends every entry not
 * yet acknowledged, in order; the owner's deduplication (producer name and
 * sequence id) skips those it had already stored, so nothing is stored twice.
 */
export class PartitionProducer {
  private readonly pending: PendingEntry[] = [];
  private readonly batch: BatchBuilder | undefined;
  private batchTimer: NodeJS.Timeout | undefined;
  private stream: { requests: AsyncQueue<PublishRequestInit>; abort: AbortController } | undefined;
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
    await Promise.all(this.pending.map((entry) => entry.settled));
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
    let settle = (): void => undefined;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const request = { message: publishMessageOf(this.topic, this.producerName, sequenceId, messages) };
    this.pending.push({ sequenceId, request, messages, settled, settle });
    this.stream?.requests.push(request);
    this.ensureLoop();
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
    this.stream = { requests, abort };
    for (const entry of this.pending) requests.push(entry.request);
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
    const entry = this.pending[0];
    const sequenceId = response.result.value?.sequenceId;
    if (entry === undefined || sequenceId !== entry.sequenceId) {
      throw new LedgerlineError(
        'INTERNAL',
        ClientReason.PROTOCOL_VIOLATION,
        `the owner of ${this.topic} answered sequence id ${String(sequenceId)}, expected ${String(entry?.sequenceId)}`,
      );
    }
    if (response.result.case === 'failure') {
      const failure = response.result.value;
      const error = new LedgerlineError(codeName(failure.code), failure.reason, failure.message, {
        details: { ...failure.details, topic: this.topic },
      });
      // Not stored because the topic is elsewhere: leave it pending, reconnect and resend.
      if (REROUTE_REASONS.has(failure.reason) || error.code === 'UNAVAILABLE') throw error;
      this.pending.shift();
      for (const message of entry.messages) message.reject(error);
      entry.settle();
      return;
    }
    const receipt = response.result.value!;
    this.pending.shift();
    const known = receipt.position !== undefined;
    const batched = entry.messages.length > 1;
    entry.messages.forEach((message, index) =>
      message.resolve({
        messageId: {
          ledgerId: receipt.position?.ledgerId ?? -1n,
          entryId: receipt.position?.entryId ?? -1n,
          batchIndex: batched ? index : -1,
          partition: this.partition,
        },
        offset: known ? receipt.firstOffset + BigInt(index) : -1n,
        duplicate: receipt.duplicate,
      }),
    );
    entry.settle();
  }

  private failPending(error: LedgerlineError): void {
    for (const entry of this.pending.splice(0)) {
      for (const message of entry.messages) message.reject(error);
      entry.settle();
    }
  }

  /** Fails everything queued (the client or producer closed without flushing). */
  abandon(error: LedgerlineError): void {
    if (this.batchTimer !== undefined) clearTimeout(this.batchTimer);
    this.batchTimer = undefined;
    for (const message of this.batch?.take() ?? []) message.reject(error);
    this.failPending(error);
    this.closing = true;
    this.stream?.abort.abort();
  }
}
