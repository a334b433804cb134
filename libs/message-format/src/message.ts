/** One message of a batch, as a producer hands it over. */
export interface BatchedMessageInput {
  payload: Uint8Array;
  /** The message's key (Pulsar's partition_key). */
  key?: string | undefined;
  properties?: Record<string, string>;
  /** The producer's event time in ms; 0 when not set. */
  eventTimeMs?: number | bigint;
}

/**
 * An entry to store: a single message (payload, key, properties, eventTimeMs)
 * or a batch (`messages`, each with its own fields). The shape follows the
 * PublishMessage of topics.proto, so a decoded request converts directly.
 */
export interface EntryInput {
  producerName: string;
  /** The sequence id of the entry's first message; a batch of N takes sequenceId .. sequenceId + N - 1. */
  sequenceId: bigint;
  /** When the entry was published, ms since the epoch. */
  publishTimeMs: number;
  payload?: Uint8Array;
  /** The entry's ordering key (Pulsar's partition_key); for a batch, the key all its messages share. */
  key?: string | undefined;
  properties?: Record<string, string>;
  eventTimeMs?: number | bigint;
  /** A batch; when non-empty, payload, properties and eventTimeMs above are unused. */
  messages?: readonly BatchedMessageInput[];
}

/** One message as a consumer receives it, out of a stored entry. */
export interface DecodedMessage {
  payload: Uint8Array;
  key: string | undefined;
  properties: Record<string, string>;
  eventTimeMs: number;
  publishTimeMs: number;
  producerName: string;
  sequenceId: bigint;
  /** Index inside its entry's batch; -1 for an entry that is not a batch. */
  batchIndex: number;
}

/** The entry-level fields of a stored entry (its MessageMetadata). */
export interface DecodedEntryHeader {
  producerName: string;
  sequenceId: bigint;
  /** The last sequence id of the entry (sequenceId + messages - 1). */
  highestSequenceId: bigint;
  publishTimeMs: number;
  key: string | undefined;
  properties: Record<string, string>;
  eventTimeMs: number;
  /** Messages in the entry: 1 for a single message, the batch size otherwise. */
  numMessages: number;
  /** Whether the payload is a batch payload (num_messages_in_batch was written). */
  batched: boolean;
}

export interface DecodedMessageEntry {
  header: DecodedEntryHeader;
  messages: DecodedMessage[];
}
