import { LedgerlineError } from '@ledgerline/errors';
import { InitialPosition, SubscriptionType, type SeekRequestSchema } from '@ledgerline/proto';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { AsyncQueue } from './async-queue.js';
import { abandonPartitions, closePartitions } from './partition-set.js';
import { callOwner, partitionTopic, type ClientContext } from './client-context.js';
import { ClientReason } from './client-reason.js';
import type { Message, MessageId } from './message.js';
import {
  choiceOption,
  DEFAULT_NACK_REDELIVERY_DELAY_MS,
  DEFAULT_RECEIVER_QUEUE_SIZE,
  integerOption,
  invalidOption,
  MAX_ACK_TIMEOUT_MS,
  MAX_DEAD_LETTER_REDELIVERIES,
  MAX_RECEIVER_QUEUE_SIZE,
  MAX_REDELIVERY_DELAY_MS,
  MIN_ACK_TIMEOUT_MS,
  stringOption,
} from './options.js';
import { PartitionConsumer, type Delivered } from './partition-consumer.js';
import { generatedName } from './producer.js';

/** Pulsar's subscription types: one consumer, one active of several, round-robin, or by key. */
export type SubscriptionTypeName = 'Exclusive' | 'Failover' | 'Shared' | 'Key_Shared';

/** The subscription types, for validation and help texts. */
export const SUBSCRIPTION_TYPES: readonly SubscriptionTypeName[] = ['Exclusive', 'Failover', 'Shared', 'Key_Shared'];

/** Where a new subscription starts: the end, the beginning, or an offset. */
export type InitialPositionOption = 'latest' | 'earliest' | { offset: number | bigint };

/** What to do with a message redelivered too often. */
export interface DeadLetterOptions {
  /** Deliveries after which a message goes to the dead-letter topic. From 1 to 1,000,000. Required. */
  maxRedeliveries: number;
  /** The dead-letter topic. Default: `<topic>-<subscription>-DLQ`. */
  topic?: string;
}

/** Options of `client.subscribe`. */
export interface SubscribeOptions {
  /** The topic (the writer topic's name, also through a read-only owner group). Required. */
  topic: string;
  /** The subscription's name. Required; at most 256 characters. */
  subscription: string;
  /** The subscription type. Default 'Exclusive'. */
  type?: SubscriptionTypeName;
  /** This consumer's name (Failover picks the active consumer by it). Default: a unique name. */
  consumerName?: string;
  /** Where a subscription that does not exist yet starts. Default 'latest'. Ignored for an existing one. */
  initialPosition?: InitialPositionOption;
  /** Messages the owner may push ahead of the application, per partition. Default 1000, from 1 to 100,000. */
  receiverQueueSize?: number;
  /** Unacknowledged messages are redelivered this long after delivery. Default 0 (never); else from 1,000 to 86,400,000. */
  ackTimeoutMs?: number;
  /** A nacked message is redelivered after this delay. Default 60,000; from 0 to 86,400,000. */
  nackRedeliveryDelayMs?: number;
  /** Dead-letter policy. Default: none (redeliver for ever). */
  deadLetter?: DeadLetterOptions;
}

/** Where `consumer.seek` moves the subscription. */
export type SeekTarget =
  { offset: number | bigint; partition?: number } | { timestamp: Date | number } | { messageId: MessageId };

const TYPE_CODES: Record<SubscriptionTypeName, SubscriptionType> = {
  Exclusive: SubscriptionType.EXCLUSIVE,
  Failover: SubscriptionType.FAILOVER,
  Shared: SubscriptionType.SHARED,
  Key_Shared: SubscriptionType.KEY_SHARED,
};

function offsetValue(option: string, value: unknown): bigint {
  if (typeof value === 'bigint' && value >= 0n) return value;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  throw invalidOption(option, 'must be a non-negative integer');
}

function initialPositionOf(value: InitialPositionOption | undefined) {
  if (value === undefined || value === 'latest') return { initialPosition: InitialPosition.LATEST };
  if (value === 'earliest') return { initialPosition: InitialPosition.EARLIEST };
  if (typeof value === 'object' && value !== null && 'offset' in value) {
    return {
      initialPosition: InitialPosition.EARLIEST,
      startOffset: offsetValue('initialPosition.offset', value.offset),
    };
  }
  throw invalidOption('initialPosition', "must be 'latest', 'earliest' or { offset }");
}

function deadLetterOf(value: DeadLetterOptions | undefined) {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null) throw invalidOption('deadLetter', 'must be an object');
  const maxRedeliveries = integerOption(
    'deadLetter.maxRedeliveries',
    value.maxRedeliveries ?? -1,
    0,
    1,
    MAX_DEAD_LETTER_REDELIVERIES,
  );
  const topic = value.topic === undefined ? '' : stringOption('deadLetter.topic', value.topic, '', 1024);
  return { deadLetter: { maxRedeliveries, topic } };
}

/** The settings of a Subscribe command, validated. */
export function subscribeSettings(options: SubscribeOptions) {
  const subscription = stringOption('subscription', options.subscription ?? '', '');
  const type = choiceOption('type', options.type, 'Exclusive', SUBSCRIPTION_TYPES);
  const ackTimeoutMs = integerOption('ackTimeoutMs', options.ackTimeoutMs, 0, 0, MAX_ACK_TIMEOUT_MS);
  if (ackTimeoutMs > 0 && ackTimeoutMs < MIN_ACK_TIMEOUT_MS) {
    throw invalidOption('ackTimeoutMs', `must be 0 or from ${MIN_ACK_TIMEOUT_MS} to ${MAX_ACK_TIMEOUT_MS}`);
  }
  return {
    type,
    receiverQueueSize: integerOption(
      'receiverQueueSize',
      options.receiverQueueSize,
      DEFAULT_RECEIVER_QUEUE_SIZE,
      1,
      MAX_RECEIVER_QUEUE_SIZE,
    ),
    subscribe: {
      subscription,
      type: TYPE_CODES[type],
      consumerName: stringOption('consumerName', options.consumerName, generatedName('consumer')),
      ackTimeoutMs: BigInt(ackTimeoutMs),
      nackRedeliveryDelayMs: BigInt(
        integerOption(
          'nackRedeliveryDelayMs',
          options.nackRedeliveryDelayMs,
          DEFAULT_NACK_REDELIVERY_DELAY_MS,
          0,
          MAX_REDELIVERY_DELAY_MS,
        ),
      ),
      ...initialPositionOf(options.initialPosition),
      ...deadLetterOf(options.deadLetter),
    },
  };
}

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
        { ...settings.subscribe, topic: name, group: context.group },
        settings.receiverQueueSize,
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

  /** Acknowledges one message; resolves once the owner has applied it to the subscription. */
  async ack(message: Message): Promise<void> {
    const delivered = this.deliveredOf(message);
    return delivered.from.ack(delivered);
  }

  /** Acknowledges a message and every message before it on its partition (Exclusive and Failover only). */
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

  /** Asks for every message delivered and not acknowledged to be redelivered. */
  redeliverUnacknowledgedMessages(): void {
    this.throwIfClosed();
    for (const partition of this.partitions) partition.redeliverUnacknowledged();
  }

  /**
   * Moves the subscription to an offset, a time or a message id; delivery
   * continues from there (messages acknowledged after that point come again).
   * An offset needs `partition` on a partitioned topic.
   */
  async seek(target: SeekTarget): Promise<void> {
    this.throwIfClosed();
    for (const { partition, request } of this.seekRequests(target)) {
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

  /** Waits for acknowledgements in flight (within the operation timeout), then closes; iteration ends. */
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
      this.delivered.set(delivered.message, delivered);
      delivered.from.taken(delivered);
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
