import { decodeMessageEntry } from './decode.js';
import type { DecodedMessage } from './message.js';

/**
 * The property that keeps a Kafka record timestamp event time cannot hold:
 * -1 (Kafka's NO_TIMESTAMP) and 0, since event time 0 means "none" and reads
 * back as the publish time. The Kafka gateway writes it; a lookup by event
 * time reads it, so that a record stamped -1 is never found by a time.
 */
export const KEPT_TIMESTAMP_PROPERTY = 'kafka.timestamp';

/**
 * The time a reader is answered for a message (Kafka Fetch's record
 * timestamp): its event time, else the timestamp kept in
 * KEPT_TIMESTAMP_PROPERTY (-1 or 0), else its publish time, else the broker
 * timestamp of its entry.
 */
export function messageTimeMs(message: DecodedMessage, brokerTimestampMs: number): number {
  if (message.eventTimeMs > 0) return message.eventTimeMs;
  const kept = message.properties[KEPT_TIMESTAMP_PROPERTY];
  if (kept === '-1' || kept === '0') return Number(kept);
  return message.publishTimeMs > 0 ? message.publishTimeMs : brokerTimestampMs;
}

/** The times a reader is answered for every message of a stored entry's message part, in batch order. */
export function messageTimesMs(bytes: Uint8Array, brokerTimestampMs: number): number[] {
  return decodeMessageEntry(bytes).messages.map((message) => messageTimeMs(message, brokerTimestampMs));
}
