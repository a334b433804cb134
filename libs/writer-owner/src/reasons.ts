/** The reasons the writer owner answers with, beside those of the libs it uses. */
export const WriterReason = {
  /** Another instance owns the topic: the error details carry `owner_address`. */
  notOwner: 'NOT_OWNER',
  /** The topic was unloaded (lease lost, drain, admin unload): retry, after a lookup. */
  topicUnloaded: 'TOPIC_UNLOADED',
  /** The topic belongs to a read-only (reader) namespace: publish to the writer topic named in the details. */
  readonlyTopic: 'READONLY_TOPIC',
  /** The entry is larger than maxMessageSizeBytes. */
  messageTooLarge: 'MESSAGE_TOO_LARGE',
  /** The instance is starting or draining and takes no new work. */
  notServing: 'OWNER_NOT_SERVING',
  /** This instance owns as many topics as maxTopics allows. */
  tooManyTopics: 'TOO_MANY_TOPICS',
  /** A request field is missing or malformed. */
  invalidRequest: 'INVALID_REQUEST',
  /** The producer's sequence id is not a valid one. */
  invalidSequenceId: 'INVALID_SEQUENCE_ID',
  /** The subscription does not exist. */
  subscriptionNotFound: 'SUBSCRIPTION_NOT_FOUND',
  /** The subscription has consumers connected (Unsubscribe refuses it, as Pulsar does). */
  subscriptionBusy: 'SUBSCRIPTION_BUSY',
} as const;
