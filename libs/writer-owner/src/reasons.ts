/**
 * The reasons only the writer owner answers with. Those both kinds of owner
 * answer with (NOT_OWNER, TOPIC_UNLOADED, READONLY_TOPIC ...) are
 * @ledgerline/ownership's OwnerReason.
 */
export const WriterReason = {
  /** The entry is larger than maxMessageSizeBytes. */
  MESSAGE_TOO_LARGE: 'MESSAGE_TOO_LARGE',
  /** The producer's sequence id is not a valid one. */
  INVALID_SEQUENCE_ID: 'INVALID_SEQUENCE_ID',
  /** The topic is not loaded on this instance: look it up and ask its owner. */
  TOPIC_NOT_LOADED: 'TOPIC_NOT_LOADED',
} as const;
