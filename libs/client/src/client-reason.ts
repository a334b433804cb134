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
  /**
   * The owner did not confirm acknowledgements within the operation timeout (an ack with
   * ackReceipts, or flushAcks). They stay queued and are sent again after a reconnect.
   */
  ACK_NOT_CONFIRMED: 'ACK_NOT_CONFIRMED',
  /** A message handed to ack/nack that this consumer did not deliver. */
  UNKNOWN_MESSAGE: 'UNKNOWN_MESSAGE',
  /** The owner answered out of order: a receipt for another sequence id than the oldest one in flight. */
  PROTOCOL_VIOLATION: 'PROTOCOL_VIOLATION',
  /** The owner ended a publish or consume stream: the client reconnects. */
  STREAM_ENDED: 'STREAM_ENDED',
} as const;

/** One of the client's own failure reasons. */
export type ClientReasonName = (typeof ClientReason)[keyof typeof ClientReason];

/**
 * Reasons the service answers with that the client branches on. The service's
 * packages define them (WriterReason, MetadataServiceReason, SubscriptionReason);
 * the SDK depends on no server package, so it names the few it needs here.
 */
export const ServiceReason = {
  /** Another instance owns the topic: the error details carry `owner_address`. */
  NOT_OWNER: 'NOT_OWNER',
  /** The topic was unloaded (lease lost, drain, admin unload): retry after a lookup. */
  TOPIC_UNLOADED: 'TOPIC_UNLOADED',
  /** No live instance owns the topic (or the lookup named no owner address): retry after a lookup. */
  NO_LIVE_OWNER: 'NO_LIVE_OWNER',
  /** The topic does not exist. */
  TOPIC_NOT_FOUND: 'TOPIC_NOT_FOUND',
  /** The subscription does not exist. */
  SUBSCRIPTION_NOT_FOUND: 'SUBSCRIPTION_NOT_FOUND',
  /** The exclusive subscription already has a consumer. */
  CONSUMER_BUSY: 'CONSUMER_BUSY',
  /**
   * A read by offset below the earliest offset retention kept (Kafka's OFFSET_OUT_OF_RANGE): the details carry
   * `earliest_offset`, where reading can start again, and `offset`, the one asked for.
   */
  OFFSET_TRIMMED: 'OFFSET_TRIMMED',
} as const;

/** Reasons from the service that mean "ask again who owns the topic, then retry". */
export const REROUTE_REASONS: ReadonlySet<string> = new Set([
  ServiceReason.NOT_OWNER,
  ServiceReason.TOPIC_UNLOADED,
  ServiceReason.NO_LIVE_OWNER,
]);
