/**
 * The reasons only the read-only owner answers with. Refusals clients already
 * handle (NOT_OWNER, TOPIC_UNLOADED, READONLY_TOPIC, SUBSCRIPTION_NOT_FOUND)
 * are the writer owner's WriterReason, so one client handles both owners.
 */
export const ReadOnlyOwnerReason = {
  /** The topic is not in a reader namespace this instance's group serves: look it up through the right group. */
  NOT_A_READER_TOPIC: 'NOT_A_READER_TOPIC',
} as const;
