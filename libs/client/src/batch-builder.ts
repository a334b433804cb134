import type { BatchedMessageSchema, PublishMessageSchema } from '@ledgerline/proto';
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { SendReceipt } from './message.js';

/** Bytes counted per message beside its payload, key and properties (lengths, tags, the event time). */
export const MESSAGE_OVERHEAD_BYTES = 32;

/** A message on its way: its fields, its size estimate and the promise of its `send`. */
export interface OutgoingMessage {
  readonly payload: Uint8Array;
  readonly key: string | undefined;
  readonly properties: Record<string, string>;
  readonly eventTimeMs: bigint;
  readonly sizeBytes: number;
  resolve(receipt: SendReceipt): void;
  reject(error: unknown): void;
}

/** The batching limits of a producer; a batch never holds more. */
export interface BatchLimits {
  maxMessages: number;
  maxBytes: number;
  maxDelayMs: number;
}

/** The encoded size estimate of a message (what the batch byte limit counts). */
export function messageSizeBytes(payload: Uint8Array, key: string | undefined, properties: Record<string, string>) {
  let size = payload.byteLength + MESSAGE_OVERHEAD_BYTES + (key === undefined ? 0 : Buffer.byteLength(key));
  for (const [name, value] of Object.entries(properties))
    size += Buffer.byteLength(name) + Buffer.byteLength(value) + 4;
  return size;
}

/** Collects messages into one batch within the limits. */
export class BatchBuilder {
  private messages: OutgoingMessage[] = [];
  private bytes = 0;

  constructor(private readonly limits: BatchLimits) {}

  get count(): number {
    return this.messages.length;
  }

  /** Whether `message` fits beside what is already collected (an empty batch takes any one message). */
  fits(message: OutgoingMessage): boolean {
    if (this.messages.length === 0) return true;
    return this.messages.length < this.limits.maxMessages && this.bytes + message.sizeBytes <= this.limits.maxBytes;
  }

  /** Adds a message that fits; returns true when the batch is now full. */
  add(message: OutgoingMessage): boolean {
    this.messages.push(message);
    this.bytes += message.sizeBytes;
    return this.messages.length >= this.limits.maxMessages || this.bytes >= this.limits.maxBytes;
  }

  /** Takes the collected messages out, leaving the builder empty. */
  take(): OutgoingMessage[] {
    const taken = this.messages;
    this.messages = [];
    this.bytes = 0;
    return taken;
  }
}

/**
 * The PublishMessage of an entry: a single message as itself, several as a
 * batch (each with its own key, properties and event time), with the key they
 * all share as the entry's key so Key_Shared dispatch keeps working. When every
 * message has an event time, their largest goes with the entry
 * (max_event_time_ms), so a lookup by event time finds it without decoding it;
 * a message without one is answered its publish time, which only the owner
 * knows, so then none is given.
 */
export function publishMessageOf(
  topic: string,
  producerName: string,
  sequenceId: bigint,
  messages: readonly OutgoingMessage[],
): MessageInitShape<typeof PublishMessageSchema> {
  const first = messages[0]!;
  const largest = largestEventTime(messages);
  const maxEventTime = largest === undefined ? {} : { maxEventTimeMs: largest };
  if (messages.length === 1) {
    return {
      topic,
      producerName,
      sequenceId,
      payload: first.payload,
      ...(first.key === undefined ? {} : { key: first.key }),
      properties: first.properties,
      eventTimeMs: first.eventTimeMs,
      ...maxEventTime,
    };
  }
  const sharedKey = messages.every((message) => message.key === first.key) ? first.key : undefined;
  const batch: MessageInitShape<typeof BatchedMessageSchema>[] = messages.map((message) => ({
    payload: message.payload,
    ...(message.key === undefined ? {} : { key: message.key }),
    properties: message.properties,
    eventTimeMs: message.eventTimeMs,
  }));
  const key = sharedKey === undefined ? {} : { key: sharedKey };
  return { topic, producerName, sequenceId, ...key, messages: batch, ...maxEventTime };
}

/** The largest event time of the messages, or undefined when one of them has none (0). */
function largestEventTime(messages: readonly OutgoingMessage[]): bigint | undefined {
  let largest = 0n;
  for (const message of messages) {
    if (message.eventTimeMs <= 0n) return undefined;
    if (message.eventTimeMs > largest) largest = message.eventTimeMs;
  }
  return largest;
}
