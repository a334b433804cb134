import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { LedgerlineError } from '@ledgerline/errors';
import { messageSizeBytes, type BatchLimits, type OutgoingMessage } from './batch-builder.js';
import { partitionTopic, type ClientContext } from './client-context.js';
import { ClientReason } from './client-reason.js';
import type { SendReceipt } from './message.js';
import { MessageRouter, ROUTING_MODES, type RoutingMode } from './message-router.js';
import {
  choiceOption,
  DEFAULT_BATCH_MAX_BYTES,
  DEFAULT_BATCH_MAX_DELAY_MS,
  DEFAULT_BATCH_MAX_MESSAGES,
  DEFAULT_MAX_PENDING_MESSAGES,
  integerOption,
  invalidOption,
  MAX_BATCH_DELAY_MS,
  MAX_BATCH_MESSAGES,
  MAX_ENTRY_SIZE_BYTES,
  MAX_PENDING_MESSAGES,
} from './options.js';
import { PartitionProducer } from './partition-producer.js';

/** Batching settings of a producer; every field has a default. */
export interface BatchingOptions {
  /** Most messages in one batch. Default 1000 (DEFAULT_BATCH_MAX_MESSAGES), from 1 to 10,000. */
  maxMessages?: number;
  /** Most bytes in one batch. Default 128 KiB (DEFAULT_BATCH_MAX_BYTES), from 1 to MAX_ENTRY_SIZE_BYTES. */
  maxBytes?: number;
  /** How long the first message of a batch may wait for others. Default 1 ms, from 0 to 10,000. */
  maxDelayMs?: number;
}

/** Options of `client.producer`. */
export interface ProducerOptions {
  /** The topic to publish to (`persistent://tenant/namespace/name` or `tenant/namespace/name`). Required. */
  topic: string;
  /**
   * The producer's name, the key of deduplication: a producer that reconnects
   * resends under it, so keep it stable for a producer's life. Default: a
   * unique name. At most 256 characters.
   */
  producerName?: string;
  /**
   * The first sequence id. Default: 0 for a generated name; for a given name,
   * the current time in microseconds, so a restarted producer with the same
   * name stays above the ids its earlier run stored (deduplication would skip
   * lower ones) as long as it averaged under a million messages a second.
   */
  initialSequenceId?: number | bigint;
  /** Batching limits, or `false` to send every message as its own entry. Default: on, with the defaults of BatchingOptions. */
  batching?: BatchingOptions | false;
  /** Messages sent and not yet acknowledged before `send` waits for room. Default 10,000, from 1 to 1,000,000. */
  maxPendingMessages?: number;
  /** How messages without a key are spread over partitions (see RoutingMode). Default 'round-robin'. */
  routing?: RoutingMode;
}

/** Per-message options of `producer.send`. */
export interface SendOptions {
  /** The message's key: it picks the partition and orders Key_Shared delivery. */
  key?: string;
  /** Properties stored with the message. */
  properties?: Record<string, string>;
  /** The producer's event time, as a Date or milliseconds since the epoch. */
  eventTime?: Date | number;
}

function batchLimits(batching: BatchingOptions | false | undefined): BatchLimits | undefined {
  if (batching === false) return undefined;
  if (batching !== undefined && (typeof batching !== 'object' || batching === null)) {
    throw invalidOption('batching', 'must be an object or false');
  }
  return {
    maxMessages: integerOption(
      'batching.maxMessages',
      batching?.maxMessages,
      DEFAULT_BATCH_MAX_MESSAGES,
      1,
      MAX_BATCH_MESSAGES,
    ),
    maxBytes: integerOption('batching.maxBytes', batching?.maxBytes, DEFAULT_BATCH_MAX_BYTES, 1, MAX_ENTRY_SIZE_BYTES),
    maxDelayMs: integerOption(
      'batching.maxDelayMs',
      batching?.maxDelayMs,
      DEFAULT_BATCH_MAX_DELAY_MS,
      0,
      MAX_BATCH_DELAY_MS,
    ),
  };
}

function initialSequenceIdOf(value: number | bigint | undefined, named: boolean): bigint {
  if (value === undefined) return named ? BigInt(Date.now()) * 1000n : 0n;
  const id = typeof value === 'bigint' ? value : Number.isSafeInteger(value) ? BigInt(value) : -1n;
  if (id < 0n || id >= 2n ** 63n) throw invalidOption('initialSequenceId', 'must be an integer from 0 to 2^63-1');
  return id;
}

/** Checks every producer option (INVALID_OPTION naming the first that is wrong) before any call is made. */
export function checkProducerOptions(options: ProducerOptions): void {
  batchLimits(options.batching);
  integerOption(
    'maxPendingMessages',
    options.maxPendingMessages,
    DEFAULT_MAX_PENDING_MESSAGES,
    1,
    MAX_PENDING_MESSAGES,
  );
  choiceOption('routing', options.routing, 'round-robin', ROUTING_MODES);
  initialSequenceIdOf(options.initialSequenceId, options.producerName !== undefined);
}

/** A unique producer or consumer name: host, process and random bits. */
export function generatedName(prefix: string): string {
  return `${prefix}-${hostname().slice(0, 64)}-${process.pid}-${randomBytes(6).toString('hex')}`;
}

function payloadBytes(payload: Uint8Array | string): Uint8Array {
  if (typeof payload === 'string') return Buffer.from(payload, 'utf8');
  if (payload instanceof Uint8Array) return payload;
  throw invalidOption('payload', 'must be a Uint8Array or a string');
}

function eventTimeMs(eventTime: Date | number | undefined): bigint {
  if (eventTime === undefined) return 0n;
  const ms = eventTime instanceof Date ? eventTime.getTime() : eventTime;
  if (!Number.isSafeInteger(ms) || ms < 0)
    throw invalidOption('eventTime', 'must be a Date or non-negative milliseconds');
  return BigInt(ms);
}

/** The longest message key, in characters. */
export const MAX_KEY_LENGTH = 64 * 1024;

function keyOf(key: string | undefined): string | undefined {
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || key.length > MAX_KEY_LENGTH) {
    throw invalidOption('key', `must be a string of at most ${MAX_KEY_LENGTH} characters`);
  }
  return key;
}

function propertiesOf(properties: Record<string, string> | undefined): Record<string, string> {
  if (properties === undefined) return {};
  for (const [name, value] of Object.entries(properties)) {
    if (typeof value !== 'string')
      throw invalidOption('properties', `value of ${JSON.stringify(name)} must be a string`);
  }
  return { ...properties };
}

/**
 * Publishes to one topic, over all its partitions when it is partitioned.
 * `send` resolves once the owner has stored the message.
 */
export class Producer {
  private readonly partitions: PartitionProducer[];
  private readonly router: MessageRouter;
  private readonly maxPendingMessages: number;
  private pendingMessages = 0;
  private readonly roomWaiters: (() => void)[] = [];
  private closed: LedgerlineError | undefined;

  /** @internal Use `client.producer(options)`. */
  constructor(
    private readonly context: ClientContext,
    /** The topic this producer publishes to. */
    readonly topic: string,
    /** The name the owner deduplicates this producer's messages by. */
    readonly producerName: string,
    partitionCount: number,
    options: ProducerOptions,
  ) {
    const batching = batchLimits(options.batching);
    this.maxPendingMessages = integerOption(
      'maxPendingMessages',
      options.maxPendingMessages,
      DEFAULT_MAX_PENDING_MESSAGES,
      1,
      MAX_PENDING_MESSAGES,
    );
    const routing = choiceOption('routing', options.routing, 'round-robin', ROUTING_MODES);
    const firstSequenceId = initialSequenceIdOf(options.initialSequenceId, options.producerName !== undefined);
    this.router = new MessageRouter(routing, partitionCount, batching?.maxDelayMs);
    const count = Math.max(1, partitionCount);
    this.partitions = Array.from(
      { length: count },
      (_, index) =>
        new PartitionProducer(
          context,
          partitionTopic(topic, partitionCount, index),
          partitionCount === 0 ? -1 : index,
          producerName,
          firstSequenceId,
          batching,
          () => this.closed ?? context.closedError(),
        ),
    );
    for (const partition of this.partitions) partition.start();
  }

  /**
   * Sends one message and resolves with where it was stored. Waits for room
   * when maxPendingMessages are in flight. Fails with the service's error when
   * the owner refuses the message, UNAVAILABLE / RECONNECT_GAVE_UP when no
   * owner could be reached within the client's reconnect bound, and
   * PRODUCER_CLOSED once the producer is closed.
   */
  async send(payload: Uint8Array | string, options: SendOptions = {}): Promise<SendReceipt> {
    this.throwIfClosed();
    const bytes = payloadBytes(payload);
    const key = keyOf(options.key);
    const properties = propertiesOf(options.properties);
    const sizeBytes = messageSizeBytes(bytes, key, properties);
    if (sizeBytes > MAX_ENTRY_SIZE_BYTES) {
      throw new LedgerlineError(
        'INVALID_ARGUMENT',
        ClientReason.MESSAGE_TOO_LARGE,
        `a message of ${sizeBytes} bytes is over the limit of ${MAX_ENTRY_SIZE_BYTES} bytes`,
        { details: { sizeBytes: String(sizeBytes), maxBytes: String(MAX_ENTRY_SIZE_BYTES) } },
      );
    }
    const event = eventTimeMs(options.eventTime);
    while (this.pendingMessages >= this.maxPendingMessages) {
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
      this.throwIfClosed();
    }
    this.pendingMessages++;
    return new Promise<SendReceipt>((resolve, reject) => {
      const message: OutgoingMessage = {
        payload: bytes,
        key,
        properties,
        eventTimeMs: event,
        sizeBytes,
        resolve: (receipt) => {
          this.released();
          resolve(receipt);
        },
        reject: (error) => {
          this.released();
          reject(error);
        },
      };
      this.partitions[this.router.choose(key)]!.add(message);
    });
  }

  /** Sends every batched message now and resolves once all messages sent so far are stored or refused. */
  async flush(): Promise<void> {
    this.throwIfClosed();
    await Promise.all(this.partitions.map((partition) => partition.flush()));
  }

  /** Flushes, then closes the producer; later calls fail with PRODUCER_CLOSED. Closing twice is fine. */
  async close(): Promise<void> {
    if (this.closed !== undefined) return;
    await Promise.all(this.partitions.map((partition) => partition.flush()));
    this.closed = new LedgerlineError(
      'FAILED_PRECONDITION',
      ClientReason.PRODUCER_CLOSED,
      `the producer of ${this.topic} is closed`,
    );
    this.wakeAll();
    await Promise.all(this.partitions.map((partition) => partition.close()));
  }

  /** @internal Called by client.close(): fails what is still queued. */
  abandon(error: LedgerlineError): void {
    this.closed ??= error;
    for (const partition of this.partitions) partition.abandon(error);
    this.wakeAll();
  }

  private throwIfClosed(): void {
    const closed = this.closed ?? this.context.closedError();
    if (closed !== undefined) throw closed;
  }

  private released(): void {
    this.pendingMessages--;
    this.roomWaiters.shift()?.();
  }

  private wakeAll(): void {
    for (const wake of this.roomWaiters.splice(0)) wake();
  }
}
