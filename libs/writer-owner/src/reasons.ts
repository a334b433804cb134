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
  /**
   * An earlier entry of the same producer failed to store on this stream: a later one is refused until the
   * producer resends from the failed one (or reconnects), so the resend is not taken for a duplicate.
   */
  SEQUENCE_GAP: 'SEQUENCE_GAP',
  /** The topic is not loaded on this instance: look it up and ask its owner. */
  TOPIC_NOT_LOADED: 'TOPIC_NOT_LOADED',
  /**
   * A transfer did not complete (the target refused or failed to load the topic, or it took longer than
   * transferTimeoutMs): the topic stays with this owner, or goes to whoever the next lookup names.
   */
  TRANSFER_FAILED: 'TRANSFER_FAILED',
  /** Another transfer of the same topic is under way on this owner. */
  TRANSFER_IN_PROGRESS: 'TRANSFER_IN_PROGRESS',
  /**
   * This owner's ledger store has not answered for storeUnreachableReleaseMs: it takes no topic (a transfer's
   * LoadTopic included) until the store answers again. Look the topic up again: another owner serves it.
   */
  STORE_UNREACHABLE: 'STORE_UNREACHABLE',
} as const;
