/**
 * The reasons only the read-only owner answers with. Refusals clients already
 * handle (NOT_OWNER, TOPIC_UNLOADED, READONLY_TOPIC, SUBSCRIPTION_NOT_FOUND)
 * are @ledgerline/ownership's OwnerReason, the same on both kinds of owner, so
 * one client handles both.
 */
export const ReadOnlyOwnerReason = {
  /** The topic is not in a reader namespace this instance's group serves: look it up through the right group. */
  NOT_A_READER_TOPIC: 'NOT_A_READER_TOPIC',
  /** A transfer could not hand the topic to its target; the topic stays served here. */
  TRANSFER_FAILED: 'TRANSFER_FAILED',
  /** The topic a transfer names is not loaded on this read-only owner. */
  TOPIC_NOT_LOADED: 'TOPIC_NOT_LOADED',
} as const;
