import { LedgerlineError } from '@ledgerline/errors';
import type { ConsumeRequestSchema, ConsumeResponse, Entry, SubscribeSchema } from '@ledgerline/proto';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { ackForStream } from './ack-ranges.js';
import { AsyncQueue } from './async-queue.js';
import type { ClientContext } from './client-context.js';
import { ClientReason } from './client-reason.js';
import { messagesOfEntry, type Message } from './message.js';
import { PartitionAcks, type Position } from './partition-acks.js';
import { rerouteAfter, withReconnect } from './reconnect.js';

type ConsumeRequestInit = MessageInitShape<typeof ConsumeRequestSchema>;
type SubscribeInit = MessageInitShape<typeof SubscribeSchema>;

/**
 * Entries the consumer reads in one ConsumeResponse (Subscribe.max_entries_per_response): an owner
 * coalesces entries ready at once up to it; the receiver queue and flow permits bound them anyway.
 */
export const MAX_ENTRIES_PER_RESPONSE = 1_000;

/** How one partition consumer subscribes and acknowledges. */
export interface PartitionSettings {
  readonly subscribe: SubscribeInit;
  readonly receiverQueueSize: number;
  /** Whether ack promises wait for the owner's receipt. */
  readonly ackReceipts: boolean;
}

/** A message handed out, with what acknowledging it needs. */
export interface Delivered {
  readonly message: Message;
  readonly from: PartitionConsumer;
  readonly generation: number;
  readonly position: Position;
  readonly batchSize: number;
  /** The entry delivered before this one on this partition, for cumulative acks inside a batch. */
  readonly previous: Position | undefined;
}

/**
 * Consumes one topic (or partition) over one Consume stream: subscribes,
 * grants flow permits as the application takes messages (half the receiver
 * queue at a time, as Pulsar does), acknowledges (PartitionAcks), and
 * reconnects when the owner moves or the connection drops. On reconnect it
 * resubscribes, resends acks not yet confirmed, and drops queued messages the
 * owner will redeliver.
 */
export class PartitionConsumer {
  private stream:
    | {
        requests: AsyncQueue<ConsumeRequestInit>;
        abort: AbortController;
        /** The owner's Subscribed said it applies Ack.ranges; until then acks go as single positions. */
        acceptsAckRanges: boolean;
      }
    | undefined;
  private restarting = false;
  private readonly subscribedWaiters: (() => void)[] = [];
  private generation = 0;
  private permitsToGrant = 0;
  private readonly acks: PartitionAcks;
  private lastPosition: Position | undefined;
  private loop: Promise<void> | undefined;
  private closing = false;
  private resolveReady!: () => void;
  private rejectReady!: (error: unknown) => void;
  /** Settles with the first Subscribed answer, or the failure that prevented it. */
  readonly ready: Promise<void>;
  /** Failover: whether the owner made this consumer the active one. */
  active = false;

  constructor(
    private readonly context: ClientContext,
    readonly topic: string,
    readonly partition: number,
    private readonly settings: PartitionSettings,
    private readonly incoming: AsyncQueue<Delivered>,
    private readonly closedError: () => LedgerlineError | undefined,
    private readonly onFatal: (error: LedgerlineError) => void,
  ) {
    this.ready = new Promise((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(() => undefined);
    this.acks = new PartitionAcks({
      topic,
      receipts: settings.ackReceipts,
      timeoutMs: context.operationTimeoutMs,
      send: (ack) => {
        const stream = this.stream;
        stream?.requests.push({ command: { case: 'ack', value: ackForStream(ack, stream.acceptsAckRanges) } });
      },
      closedError,
    });
  }

  start(): void {
    this.loop = this.connectionLoop();
  }

  /** Counts a message the application took, granting permits in halves of the receiver queue. */
  taken(delivered: Delivered): void {
    if (delivered.generation !== this.generation) return;
    this.grant(1);
  }

  /** Acknowledges one message; see PartitionAcks.ack for when it resolves. */
  ack(delivered: Delivered): Promise<void> {
    return this.acks.ack(delivered.position, delivered.message.messageId.batchIndex, delivered.batchSize);
  }

  /** Acknowledges this message and everything before it on this partition. */
  ackCumulative(delivered: Delivered): Promise<void> {
    const { position, batchSize, previous } = delivered;
    return this.acks.ackCumulative(position, delivered.message.messageId.batchIndex, batchSize, previous);
  }

  /** Whether a message was acknowledged since it was queued (a redelivery of one already acknowledged). */
  isAcked(delivered: Delivered): boolean {
    return this.acks.isAcked(delivered.position, delivered.message.messageId.batchIndex);
  }

  /** Resolves once the owner confirmed every ack made so far on this partition. */
  flushAcks(): Promise<void> {
    return this.acks.flushAcks();
  }

  /** Asks for a message's redelivery after the subscription's nack delay. */
  nack(delivered: Delivered): void {
    this.stream?.requests.push({ command: { case: 'nack', value: { positions: [delivered.position] } } });
  }

  /** Asks the owner to redeliver everything delivered and not acknowledged. */
  redeliverUnacknowledged(): void {
    this.stream?.requests.push({ command: { case: 'redeliverUnacknowledged', value: {} } });
  }

  /**
   * After a seek: forget acknowledgements (the application asked to see
   * those messages again) and subscribe afresh, as Pulsar's consumers do, so
   * nothing queued or in flight from before the seek is handed out after it.
   * Resolves once the owner has accepted the new subscription.
   */
  afterSeek(): Promise<void> {
    this.acks.forget();
    this.incoming.remove((delivered) => delivered.from === this);
    const resubscribed = new Promise<void>((resolve) => this.subscribedWaiters.push(resolve));
    this.restarting = true;
    this.stream?.abort.abort();
    return resubscribed;
  }

  /** Cancels the stream without waiting for anything (the client is closing). */
  abandon(): void {
    this.closing = true;
    this.acks.stop(this.closedError() ?? this.unconfirmedError());
    this.stream?.abort.abort();
  }

  /**
   * Sends the acks still grouped and waits, within the operation timeout, for
   * the owner to confirm every ack; the stream keeps reconnecting meanwhile,
   * so acks in flight when it dropped are sent again. Then every promise still
   * waiting rejects (CONSUMER_CLOSED): an ack the owner never confirmed may be
   * delivered again, to this subscription's next consumer. The stream ends
   * gracefully, or is cancelled if the owner has not ended it by the bound.
   */
  async close(): Promise<void> {
    const deadline = Date.now() + this.context.operationTimeoutMs;
    this.acks.closeStarted(this.unconfirmedError());
    await this.acks.flushAcks().catch(() => undefined);
    this.closing = true;
    this.acks.stop(this.unconfirmedError());
    this.stream?.requests.end();
    if (!(await settlesWithin(this.loop, deadline - Date.now()))) this.stream?.abort.abort();
    await this.loop;
  }

  private unconfirmedError(): LedgerlineError {
    return new LedgerlineError(
      'FAILED_PRECONDITION',
      ClientReason.CONSUMER_CLOSED,
      `the consumer of ${this.topic} closed before the owner confirmed the acknowledgement`,
    );
  }

  private grant(permits: number, now = false): void {
    this.permitsToGrant += permits;
    const threshold = now ? 1 : Math.max(1, Math.floor(this.settings.receiverQueueSize / 2));
    if (this.stream !== undefined && this.permitsToGrant >= threshold) {
      this.stream.requests.push({ command: { case: 'flow', value: { permits: this.permitsToGrant } } });
      this.permitsToGrant = 0;
    }
  }

  /**
   * Why the stream stops reconnecting: the client closed, or close() is past
   * flushing acks. A consumer that is closing keeps reconnecting until then.
   */
  private readonly stopped = (): LedgerlineError | undefined =>
    this.closing ? (this.closedError() ?? this.unconfirmedError()) : this.context.closedError();

  private async connectionLoop(): Promise<void> {
    while (this.stopped() === undefined) {
      try {
        await withReconnect(this.context.reconnect, this.topic, this.context.lookup, this.stopped, () =>
          this.runStream(),
        );
      } catch (error) {
        const failure = LedgerlineError.from(error);
        this.acks.stop(failure);
        this.rejectReady(failure);
        if (!this.closing && this.closedError() === undefined) this.onFatal(failure);
        return;
      }
    }
  }

  private openStream(address: string, abort: AbortController) {
    const requests = new AsyncQueue<ConsumeRequestInit>();
    const connections = this.context.connections;
    const responses = connections
      .to(address)
      .topics.consume(requests, connections.callOptions(undefined, abort.signal));
    this.generation++;
    // Whatever the last stream queued and nobody took will be redelivered on this one.
    this.incoming.remove((delivered) => delivered.from === this);
    this.lastPosition = undefined;
    requests.push({
      command: {
        case: 'subscribe',
        value: { ...this.settings.subscribe, maxEntriesPerResponse: MAX_ENTRIES_PER_RESPONSE },
      },
    });
    // Sent before the owner said whether it applies ranges: as single positions, which every owner applies.
    for (const ack of this.acks.unconfirmed()) requests.push({ command: { case: 'ack', value: ack } });
    requests.push({ command: { case: 'flow', value: { permits: this.settings.receiverQueueSize } } });
    this.permitsToGrant = 0;
    this.stream = { requests, abort, acceptsAckRanges: false };
    return responses;
  }

  /** One stream's life; see PartitionProducer.runStream for the contract. */
  private async runStream(): Promise<void> {
    if (this.closing) return;
    const route = await this.context.lookup.route(this.topic);
    const abort = new AbortController();
    const responses = this.openStream(route.address, abort);
    let answered = false;
    try {
      for await (const response of responses) {
        this.onResponse(response);
        answered = true;
      }
      if (this.closing || this.takeRestart()) return;
      throw new LedgerlineError(
        'UNAVAILABLE',
        ClientReason.STREAM_ENDED,
        `the owner of ${this.topic} ended the consume stream`,
      );
    } catch (error) {
      if (this.closing || this.takeRestart()) return;
      if (answered && rerouteAfter(error, this.topic, this.context.lookup)) return;
      throw error;
    } finally {
      this.stream?.requests.end();
      this.stream = undefined;
      abort.abort();
    }
  }

  private takeRestart(): boolean {
    const restart = this.restarting;
    this.restarting = false;
    return restart;
  }

  private onResponse(response: ConsumeResponse): void {
    switch (response.event.case) {
      case 'subscribed':
        this.active = response.event.value.active;
        if (this.stream !== undefined) this.stream.acceptsAckRanges = response.event.value.acceptsAckRanges;
        this.resolveReady();
        for (const wake of this.subscribedWaiters.splice(0)) wake();
        return;
      case 'entry':
        this.deliver(response.event.value);
        for (const entry of response.moreEntries) this.deliver(entry);
        return;
      case 'ackReceipt':
        this.acks.receipt(response.event.value.requestId);
        return;
      case 'activeConsumerChange':
        this.active = response.event.value.active;
        return;
      default:
        return;
    }
  }

  private deliver(entry: Entry): void {
    const position = { ledgerId: entry.position?.ledgerId ?? -1n, entryId: entry.position?.entryId ?? -1n };
    const batchSize = Math.max(entry.numMessages, entry.messages.length);
    const previous = this.lastPosition;
    this.lastPosition = position;
    let queued = 0;
    for (const message of messagesOfEntry(entry, this.topic, this.partition)) {
      if (this.acks.isAcked(position, message.messageId.batchIndex)) continue;
      this.incoming.push({ message, from: this, generation: this.generation, position, batchSize, previous });
      queued++;
    }
    if (batchSize > 1) {
      const present = new Set(
        entry.messages.map((message, index) => (message.batchIndex >= 0 ? message.batchIndex : index)),
      );
      this.acks.batchDelivered(position, batchSize, present);
    }
    // Permits of messages not handed out (already acknowledged) come back at once.
    if (batchSize - queued > 0) this.grant(batchSize - queued);
  }
}

/** Whether `promise` settles within `timeoutMs` (it is not cancelled either way). */
async function settlesWithin(promise: Promise<void> | undefined, timeoutMs: number): Promise<boolean> {
  if (promise === undefined) return true;
  let timer: NodeJS.Timeout | undefined;
  const settled = await Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, timeoutMs)))),
  ]);
  clearTimeout(timer);
  return settled;
}
