/** Pulsar's checksum magic, in front of the CRC32C of everything after the checksum. */
export const CHECKSUM_MAGIC = 0x0e01;
/** Magic (2 bytes), CRC32C (4 bytes) and the metadata size (4 bytes), big-endian. */
export const MESSAGE_HEADER_BYTES = 10;
/** The largest MessageMetadata a decoder reads (Pulsar caps a whole frame at 5 MiB; metadata is far smaller). */
export const MAX_METADATA_BYTES = 1024 * 1024;
/** The largest SingleMessageMetadata of one batched message. */
export const MAX_SINGLE_METADATA_BYTES = 256 * 1024;
/** Messages one batch entry may hold (Pulsar's default batchingMaxMessages is 1000; this leaves room). */
export const MAX_MESSAGES_PER_BATCH = 100_000;
/** Properties one message (or one entry) may carry. */
export const MAX_PROPERTIES_PER_MESSAGE = 1_000;
/** UTF-8 bytes of a key, a producer name, or one property name or value. */
export const MAX_KEY_BYTES = 64 * 1024;
export const MAX_PRODUCER_NAME_BYTES = 1024;
export const MAX_PROPERTY_BYTES = 64 * 1024;
/** Largest sequence id: Pulsar's are signed 64-bit. */
export const MAX_SEQUENCE_ID = (1n << 63n) - 1n;
