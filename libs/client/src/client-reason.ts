/**
 * The reasons of the failures the client itself reports, as stable
 * UPPER_SNAKE strings a program can branch on (`error.reason`). Failures the
 * service reports keep the service's reason (NOT_OWNER, TOPIC_NOT_FOUND, ...).
 */
export const ClientReason = {
  /** The client was closed: every call on it and on its producers, consumers and readers fails. */
  CLIENT_CLOSED: 'CLIENT_CLOSED',
  /** The producer was closed. */
  PRODUCER_CLOSED: 'PRODUCER_CLOSED',
  /** The consumer was closed. */
  CONSUMER_CLOSED: 'CONSUMER_CLOSED',
  /** The reader was closed. */
  READER_CLOSED: 'READER_CLOSED',
  /** An option is out of its documented bounds; `details.option` names it. */
  INVALID_OPTION: 'INVALID_OPTION',
  /** A message is larger than the largest entry the client may send. */
  MESSAGE_TOO_LARGE: 'MESSAGE_TOO_LARGE',
  /** The topic's owner could not be reached within the reconnect bound; the cause says why. */
  RECONNECT_GAVE_UP: 'RECONNECT_GAVE_UP',
  /** Cumulative acknowledgement on a Shared or Key_Shared subscription (Pulsar refuses it too). */
  CUMULATIVE_ACK_NOT_ALLOWED: 'CUMULATIVE_ACK_NOT_ALLOWED',
  /** A seek target that does not fit the topic (an offset on a partitioned topic without a partition). */
  INVALID_SEEK_TARGET: 'INVALID_SEEK_TARGET',
  /** A message handed to ack/nack that this consumer did not deliver. */
  UNKNOWN_MESSAGE: 'UNKNOWN_MESSAGE',
  /** The owner answered out of order: a receipt for another sequence id than the oldest one in flight. */
  PROTOCOL_VIOLATION: 'PROTOCOL_VIOLATION',
} as const;

/** One of the client's own failure reasons. */
export type ClientReasonName = (typeof ClientReason)[keyof typeof ClientReason];

/** Reasons from the service that mean "ask again who owns the topic, then retry". */
export const REROUTE_REASONS: ReadonlySet<string> = new Set(['NOT_OWNER', 'TOPIC_UNLOADED', 'NO_LIVE_OWNER']);
