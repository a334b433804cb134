/** The reasons the writer owner answers with, beside those of the libs it uses. */
export const WriterReason = {
  /** Another instance owns the topic: the error details carry `owner_address`. */
  NOT_OWNER: 'NOT_OWNER',
  /** The topic was unloaded (lease lost, drain, admin unload): retry, after a lookup. */
  TOPIC_UNLOADED: 'TOPIC_UNLOADED',
  /** The topic belongs to a read-only (reader) namespace: publish to the writer topic named in the details. */
  READONLY_TOPIC: 'READONLY_TOPIC',
  /** The entry is larger than maxMessageSizeBytes. */
  MESSAGE_TOO_LARGE: 'MESSAGE_TOO_LARGE',
  /** The instance is starting or draining and takes no new work. */
  OWNER_NOT_SERVING: 'OWNER_NOT_SERVING',
  /** This instance owns as many topics as maxTopics allows. */
  TOO_MANY_TOPICS: 'TOO_MANY_TOPICS',
  /** A request field is missing or malformed. */
  INVALID_REQUEST: 'INVALID_REQUEST',
  /** The producer's sequence id is not a valid one. */
  INVALID_SEQUENCE_ID: 'INVALID_SEQUENCE_ID',
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
  /** The topic is not loaded on this instance: look it up and ask its owner. */
  TOPIC_NOT_LOADED: 'TOPIC_NOT_LOADED',
  /** The subscription name is reserved for the system. */
  RESERVED_SUBSCRIPTION_NAME: 'RESERVED_SUBSCRIPTION_NAME',
} as const;
