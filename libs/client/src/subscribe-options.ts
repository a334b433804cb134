import { InitialPosition, SubscriptionType } from '@ledgerline/proto';
import {
  booleanOption,
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
  /**
   * Whether `ack`, `ackCumulative` wait for the owner to persist the ack
   * (Pulsar's isAckReceiptEnabled). Default false: they resolve once the ack
   * is recorded in the client and queued to the owner; `flushAcks()` waits
   * for persistence.
   */
  ackReceipts?: boolean;
}

const TYPE_CODES: Record<SubscriptionTypeName, SubscriptionType> = {
  Exclusive: SubscriptionType.EXCLUSIVE,
  Failover: SubscriptionType.FAILOVER,
  Shared: SubscriptionType.SHARED,
  Key_Shared: SubscriptionType.KEY_SHARED,
};

/** A non-negative integer offset as a bigint. */
export function offsetValue(option: string, value: unknown): bigint {
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
    ackReceipts: booleanOption('ackReceipts', options.ackReceipts, false),
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
