/** Why a message or a stored entry was refused: stable reasons a program can branch on. */
export const MessageFormatReason = {
  /** The stored bytes are too short for what they declare, or a length runs past the end. */
  truncated: 'MESSAGE_TRUNCATED',
  /** The entry does not start with Pulsar's checksum magic 0x0e01. */
  badMagic: 'MESSAGE_BAD_MAGIC',
  /** The CRC32C does not match the bytes: they were damaged. */
  checksumMismatch: 'MESSAGE_CHECKSUM_MISMATCH',
  /** MessageMetadata or SingleMessageMetadata is not valid protobuf, or over its size limit. */
  badMetadata: 'MESSAGE_BAD_METADATA',
  /** The batch payload does not add up: counts or sizes disagree. */
  badBatch: 'MESSAGE_BAD_BATCH',
  /** A message to encode is malformed (types, sizes, counts). */
  invalidMessage: 'INVALID_MESSAGE',
} as const;
