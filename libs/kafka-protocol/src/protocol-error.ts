import { LedgerlineError } from '@ledgerline/errors';

/** The stable reasons the codec fails with. Every decode failure is one of these, never a RangeError. */
export const KafkaProtocolReason = {
  /** The bytes end before a field, a length or a record does. */
  KAFKA_TRUNCATED: 'KAFKA_TRUNCATED',
  /** A length, count or varint is negative, too large or otherwise impossible. */
  KAFKA_BAD_LENGTH: 'KAFKA_BAD_LENGTH',
  /** A frame's size is above the named bound (maxFrameSizeBytes) or below the smallest header. */
  KAFKA_FRAME_TOO_LARGE: 'KAFKA_FRAME_TOO_LARGE',
  /** The API key is not one this codec has a schema for. */
  KAFKA_UNKNOWN_API: 'KAFKA_UNKNOWN_API',
  /** The API is known but not in the requested version. */
  KAFKA_UNSUPPORTED_VERSION: 'KAFKA_UNSUPPORTED_VERSION',
  /** A record batch is not magic 2, its CRC-32C does not match, or its records do not add up. */
  KAFKA_CORRUPT_RECORD: 'KAFKA_CORRUPT_RECORD',
  /** A record batch uses a compression type Kafka does not define, or one this Node cannot write (zstd before 22.15). */
  KAFKA_UNSUPPORTED_COMPRESSION: 'KAFKA_UNSUPPORTED_COMPRESSION',
  /** Bytes were left over after a message or a record was fully read. */
  KAFKA_TRAILING_BYTES: 'KAFKA_TRAILING_BYTES',
  /** A value handed to an encoder does not fit its field (an out-of-range integer, a missing field). */
  KAFKA_BAD_VALUE: 'KAFKA_BAD_VALUE',
} as const;
export type KafkaProtocolReasonValue = (typeof KafkaProtocolReason)[keyof typeof KafkaProtocolReason];

/** A decode or encode failure: bad input from outside, so INVALID_ARGUMENT with a stable reason. */
export function protocolError(reason: KafkaProtocolReasonValue, message: string): LedgerlineError {
  return new LedgerlineError('INVALID_ARGUMENT', reason, message);
}

/** True when `error` is one of the codec's own failures. */
export function isProtocolError(error: unknown): error is LedgerlineError {
  return (
    error instanceof LedgerlineError &&
    Object.values(KafkaProtocolReason).includes(error.reason as KafkaProtocolReasonValue)
  );
}
