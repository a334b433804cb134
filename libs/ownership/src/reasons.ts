/**
 * The reasons every owner answers with, writer and read-only alike: clients
 * and the read-only owner's calls to writer owners branch on them, so one
 * client handles both kinds of owner.
 */
export const OwnerReason = {
  /** Another instance owns the topic: the error details carry `owner_address`. */
  NOT_OWNER: 'NOT_OWNER',
  /** The topic was unloaded (lease lost, drain, admin unload): retry, after a lookup. */
  TOPIC_UNLOADED: 'TOPIC_UNLOADED',
  /** The topic belongs to a read-only (reader) namespace: publish to the writer topic named in the details. */
  READONLY_TOPIC: 'READONLY_TOPIC',
  /** The instance is starting or draining and takes no new work. */
  OWNER_NOT_SERVING: 'OWNER_NOT_SERVING',
  /** This instance owns as many topics as maxTopics allows. */
  TOO_MANY_TOPICS: 'TOO_MANY_TOPICS',
  /** A request field is missing or malformed. */
  INVALID_REQUEST: 'INVALID_REQUEST',
  /** The subscription does not exist. */
  SUBSCRIPTION_NOT_FOUND: 'SUBSCRIPTION_NOT_FOUND',
  /** The subscription has consumers connected (Unsubscribe refuses it, as Pulsar does). */
  SUBSCRIPTION_BUSY: 'SUBSCRIPTION_BUSY',
  /** A Consume stream sent a second Subscribe: a stream subscribes once. */
  ALREADY_SUBSCRIBED: 'ALREADY_SUBSCRIBED',
  /** This instance has lost its owner session (expired or unreachable metadata): retry shortly, after a lookup. */
  OWNER_SESSION_LOST: 'OWNER_SESSION_LOST',
  /** A message position (ledger id, entry id, batch index) is out of range. */
  INVALID_POSITION: 'INVALID_POSITION',
  /**
   * A read by offset below the earliest offset retention kept (Kafka's OFFSET_OUT_OF_RANGE): the details carry
   * `earliest_offset`, where reading can start again, and `offset`, the one asked for.
   */
  OFFSET_TRIMMED: 'OFFSET_TRIMMED',
  /** The subscription name is reserved for the system. */
  RESERVED_SUBSCRIPTION_NAME: 'RESERVED_SUBSCRIPTION_NAME',
} as const;
