/** Pulsar's checksum magic, in front of the CRC32C of everything after the checksum. */
export const CHECKSUM_MAGIC = 0x0e01;
/** Magic (2 bytes), CRC32C (4 bytes) and the metadata size (4 bytes), big-endian. */
export const MESSAGE_HEADER_BYTES = 10;
/**
 * The largest entry any writer owner stores: the ceiling of its maxMessageSizeBytes, of the managed ledger's
 * maxEntrySizeBytes and of the ledger store's appends. The bounds below that a key or metadata may reach are this
 * one, since the entry's own size is what the owner limits.
 */
export const MAX_ENTRY_BYTES = 64 * 1024 * 1024;
/**
 * The largest MessageMetadata a decoder reads. It holds the key and the properties, which the encoder bounds one by
 * one, not in total: a lower bound here would make an entry the owner accepted unreadable.
 */
export const MAX_METADATA_BYTES = MAX_ENTRY_BYTES;
/** The largest SingleMessageMetadata of one batched message: its key and properties, as for MAX_METADATA_BYTES. */
export const MAX_SINGLE_METADATA_BYTES = MAX_ENTRY_BYTES;
/** Messages one batch entry may hold (Pulsar's default batchingMaxMessages is 1000; this leaves room). */
export const MAX_MESSAGES_PER_BATCH = 100_000;
/** Properties one message (or one entry) may carry. */
export const MAX_PROPERTIES_PER_MESSAGE = 1_000;
/**
 * UTF-8 bytes of a key. Kafka allows any key within message.max.bytes, so a key is bounded by the entry it is in
 * (the writer owner's maxMessageSizeBytes, at most MAX_ENTRY_BYTES), not by a bound of its own.
 */
export const MAX_KEY_BYTES = MAX_ENTRY_BYTES;
/** UTF-8 bytes of a producer name, and of one property name or value. */
export const MAX_PRODUCER_NAME_BYTES = 1024;
export const MAX_PROPERTY_BYTES = 64 * 1024;
/** Largest sequence id: Pulsar's are signed 64-bit. */
export const MAX_SEQUENCE_ID = (1n << 63n) - 1n;
