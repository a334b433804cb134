import { LedgerlineError } from '@ledgerline/errors';
import type { SeekRequestSchema } from '@ledgerline/proto';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { AsyncQueue } from './async-queue.js';
import { abandonPartitions, closePartitions } from './partition-set.js';
import { callOwner, partitionTopic, type ClientContext } from './client-context.js';
import { ClientReason } from './client-reason.js';
import type { Message, MessageId } from './message.js';
import { invalidOption } from './options.js';
import { PartitionConsumer, type Delivered } from './partition-consumer.js';
import { offsetValue, type subscribeSettings, type SubscriptionTypeName } from './subscribe-options.js';

/** Where `consumer.seek` moves the subscription. */
export type SeekTarget =
  { offset: number | bigint; partition?: number } | { timestamp: Date | number } | { messageId: MessageId };

/**
 * Receives a subscription's messages from one topic, over all its partitions
 * when it is partitioned. Iterate it with `for await`, or call `receive()`.
 */
export class Consumer implements AsyncIterable<Message> {
  private readonly incoming = new AsyncQueue<Delivered>();
  private readonly delivered = new WeakMap<Message, Delivered>();
  private readonly partitions: PartitionConsumer[];
  private closed: LedgerlineError | undefined;

  /** @internal Use `client.subscribe(options)`. */
  constructor(
    private readonly context: ClientContext,
    /** The topic this consumer reads. */
    readonly topic: string,
    /** The subscription's name. */
    readonly subscription: string,
    /** The subscription type. */
    readonly type: SubscriptionTypeName,
    partitionCount: number,
    settings: ReturnType<typeof subscribeSettings>,
  ) {
    const stopped = () => this.closed ?? context.closedError();
    this.partitions = Array.from({ length: Math.max(1, partitionCount) }, (_, index) => {
      const name = partitionTopic(topic, partitionCount, index);
      return new PartitionConsumer(
        context,
        name,
        partitionCount === 0 ? -1 : index,
        {
          subscribe: { ...settings.subscribe, topic: name, group: context.group },
          receiverQueueSize: settings.receiverQueueSize,
          ackReceipts: settings.ackReceipts,
        },
        this.incoming,
        stopped,
        (error) => this.incoming.fail(error),
      );
    });
  }

  /** @internal Starts every partition's stream and resolves once all are subscribed. */
  async start(): Promise<void> {
    for (const partition of this.partitions) partition.start();
    try {
      await Promise.all(this.partitions.map((partition) => partition.ready));
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  /** Failover: whether this consumer is the active one (of any partition). */
  get isActive(): boolean {
    return this.partitions.some((partition) => partition.active);
  }

  /** The next message, waiting for one. Fails with CONSUMER_CLOSED once closed, or with why the consumer stopped. */
  async receive(): Promise<Message> {
    const next = await this.next();
    if (next.done === true) throw this.closed ?? this.context.closedError() ?? this.closedError();
    return next.value;
  }

  /**
   * Acknowledges one message. Resolves once the ack is recorded here and
   * queued to the owner (with `ackReceipts`: once the owner persisted it).
   * From then on this consumer never hands the message out again, also
   * across reconnects. Rejects only for a closed consumer (CONSUMER_CLOSED,
   * CLIENT_CLOSED, or the failure that stopped its stream for good) or a
   * message it did not deliver (UNKNOWN_MESSAGE). An ack that waits for its
   * receipt (`ackReceipts`, or past MAX_UNCONFIRMED_ACKS) also rejects when
   * the owner has not confirmed it within the operation timeout
   * (ACK_NOT_CONFIRMED; the ack stays queued and is sent again).
   */
  async ack(message: Message): Promise<void> {
    const delivered = this.deliveredOf(message);
    return delivered.from.ack(delivered);
  }

  /** Acknowledges a message and everything before it on its partition (Exclusive and Failover only), as `ack`. */
  async ackCumulative(message: Message): Promise<void> {
    if (this.type === 'Shared' || this.type === 'Key_Shared') {
      throw new LedgerlineError(
        'FAILED_PRECONDITION',
        ClientReason.CUMULATIVE_ACK_NOT_ALLOWED,
        `cumulative acknowledgement is not allowed on a ${this.type} subscription`,
      );
    }
    const delivered = this.deliveredOf(message);
    return delivered.from.ackCumulative(delivered);
  }

  /** Negatively acknowledges a message: the owner redelivers it after the nack delay. */
  nack(message: Message): void {
    const delivered = this.deliveredOf(message);
    delivered.from.nack(delivered);
  }

  /**
   * Sends the acks still grouped now and resolves once the owner persisted
   * every ack made so far (in both modes). Rejects if the consumer closes
   * first (CONSUMER_CLOSED), when its stream fails for good (the reason),
   * or after the operation timeout (ACK_NOT_CONFIRMED: the acks stay queued
   * and are sent again; call it again to keep waiting).
   */
  async flushAcks(): Promise<void> {
    this.throwIfClosed();
    await Promise.all(this.partitions.map((partition) => partition.flushAcks()));
  }

  /** Asks for every message delivered and not acknowledged to be redelivered. */
  redeliverUnacknowledgedMessages(): void {
    this.throwIfClosed();
    for (const partition of this.partitions) partition.redeliverUnacknowledged();
  }

  /**
   * Moves the subscription to an offset, a time or a message id; delivery
   * continues from there (messages acknowledged after that point come again).
   * An offset needs `partition` on a partitioned topic. Acks made before the
   * seek are persisted first (flushAcks), so none lands after it.
   */
  async seek(target: SeekTarget): Promise<void> {
    this.throwIfClosed();
    const requests = this.seekRequests(target);
    await this.flushAcks();
    for (const { partition, request } of requests) {
      await callOwner(
        this.context,
        partition.topic,
        () => this.closed ?? this.context.closedError(),
        (clients, options) =>
          clients.topics.seek({ ...request, topic: partition.topic, subscription: this.subscription }, options),
      );
      await partition.afterSeek();
    }
  }

  /** Deletes the subscription (on every partition), then closes the consumer. */
  async unsubscribe(): Promise<void> {
    this.throwIfClosed();
    await this.close();
    for (const partition of this.partitions) {
      await callOwner(
        this.context,
        partition.topic,
        () => this.context.closedError(),
        (clients, options) =>
          clients.topics.unsubscribe({ topic: partition.topic, subscription: this.subscription }, options),
      );
    }
  }

  /**
   * Closes; iteration ends. First sends the acks still grouped and waits,
   * within the operation timeout, for the owner to persist every ack; an ack
   * or flushAcks() still waiting then rejects with CONSUMER_CLOSED. An ack
   * that resolved but was not persisted by then may be delivered again to
   * this subscription's next consumer.
   */
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
    const closed = this.closed ?? this.context.closedError();
    if (closed !== undefined) return Promise.resolve({ value: undefined, done: true });
    return this.incoming.next().then((result) => {
      if (result.done === true) return result;
      const delivered = result.value;
      delivered.from.taken(delivered);
      // A redelivery queued before the application acknowledged an earlier copy: never handed out again.
      if (delivered.from.isAcked(delivered)) return this.next();
      this.delivered.set(delivered.message, delivered);
      return { value: delivered.message, done: false };
    });
  }

  [Symbol.asyncIterator](): AsyncIterator<Message> {
    return {
      next: () => this.next(),
      return: async () => ({ value: undefined, done: true }),
    };
  }

  private seekRequests(target: SeekTarget) {
    type Request = { target: NonNullable<MessageInitShape<typeof SeekRequestSchema>['target']> };
    const all = (request: Request) => this.partitions.map((partition) => ({ partition, request }));
    if ('timestamp' in target) {
      const ms = target.timestamp instanceof Date ? target.timestamp.getTime() : target.timestamp;
      if (!Number.isSafeInteger(ms) || ms < 0)
        throw invalidOption('timestamp', 'must be a Date or non-negative milliseconds');
      return all({ target: { case: 'timestampMs', value: BigInt(ms) } });
    }
    if ('messageId' in target) {
      const partition = this.partitionOf(target.messageId.partition);
      const { ledgerId, entryId } = target.messageId;
      return [{ partition, request: { target: { case: 'position' as const, value: { ledgerId, entryId } } } }];
    }
    if ('offset' in target) {
      const offset = offsetValue('offset', target.offset);
      if (this.partitions.length > 1 && target.partition === undefined) {
        throw new LedgerlineError(
          'INVALID_ARGUMENT',
          ClientReason.INVALID_SEEK_TARGET,
          `${this.topic} is partitioned: an offset seek needs { offset, partition }`,
        );
      }
      const partition = this.partitionOf(target.partition ?? -1);
      return [{ partition, request: { target: { case: 'offset' as const, value: offset } } }];
    }
    throw new LedgerlineError(
      'INVALID_ARGUMENT',
      ClientReason.INVALID_SEEK_TARGET,
      'seek needs { offset }, { timestamp } or { messageId }',
    );
  }

  private partitionOf(index: number): PartitionConsumer {
    const partition = this.partitions.length === 1 && index <= 0 ? this.partitions[0] : this.partitions[index];
    if (partition === undefined) {
      throw new LedgerlineError(
        'INVALID_ARGUMENT',
        ClientReason.INVALID_SEEK_TARGET,
        `${this.topic} has no partition ${index}`,
      );
    }
    return partition;
  }

  private deliveredOf(message: Message): Delivered {
    this.throwIfClosed();
    const delivered = this.delivered.get(message);
    if (delivered === undefined) {
      throw new LedgerlineError(
        'INVALID_ARGUMENT',
        ClientReason.UNKNOWN_MESSAGE,
        'this message was not delivered by this consumer',
      );
    }
    return delivered;
  }

  private closedError(): LedgerlineError {
    return new LedgerlineError(
      'FAILED_PRECONDITION',
      ClientReason.CONSUMER_CLOSED,
      `the consumer of ${this.topic} (${this.subscription}) is closed`,
    );
  }

  private throwIfClosed(): void {
    const closed = this.closed ?? this.context.closedError();
    if (closed !== undefined) throw closed;
  }
}
