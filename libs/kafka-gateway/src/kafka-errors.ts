import { LedgerlineError } from '@ledgerline/errors';
import { isProtocolError, KafkaErrorCode, KafkaProtocolReason } from '@ledgerline/kafka-protocol';
import { OwnerReason } from '@ledgerline/ownership';
import { GatewayReason } from './reasons.js';

/**
 * The Kafka error code a client should see for a failure of the Ledgerline
 * side. Moves and outages become NOT_LEADER_OR_FOLLOWER, which every Kafka
 * client retries after refreshing metadata.
 */
export function kafkaErrorOf(error: unknown): number {
  if (isProtocolError(error)) {
    return error.reason === KafkaProtocolReason.KAFKA_UNSUPPORTED_COMPRESSION
      ? KafkaErrorCode.UNSUPPORTED_COMPRESSION_TYPE
      : KafkaErrorCode.CORRUPT_MESSAGE;
  }
  if (!(error instanceof LedgerlineError)) return KafkaErrorCode.UNKNOWN_SERVER_ERROR;
  if (error.reason === OwnerReason.NOT_OWNER || error.reason === OwnerReason.TOPIC_UNLOADED) {
    return KafkaErrorCode.NOT_LEADER_OR_FOLLOWER;
  }
  // A fetch below the log start offset: the client resets by its auto.offset.reset, as against Kafka.
  if (error.reason === OwnerReason.OFFSET_TRIMMED) return KafkaErrorCode.OFFSET_OUT_OF_RANGE;
  if (error.reason === GatewayReason.INVALID_KAFKA_TIMESTAMP) return KafkaErrorCode.INVALID_TIMESTAMP;
  switch (error.code) {
    case 'NOT_FOUND':
      return KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    case 'UNAVAILABLE':
    case 'ABORTED':
      return KafkaErrorCode.NOT_LEADER_OR_FOLLOWER;
    case 'DEADLINE_EXCEEDED':
    case 'CANCELLED':
      return KafkaErrorCode.REQUEST_TIMED_OUT;
    case 'PERMISSION_DENIED':
    case 'UNAUTHENTICATED':
      return KafkaErrorCode.TOPIC_AUTHORIZATION_FAILED;
    case 'RESOURCE_EXHAUSTED':
      return KafkaErrorCode.MESSAGE_TOO_LARGE;
    case 'INVALID_ARGUMENT':
      return KafkaErrorCode.INVALID_REQUEST;
    case 'ALREADY_EXISTS':
      return KafkaErrorCode.TOPIC_ALREADY_EXISTS;
    case 'FAILED_PRECONDITION':
      return KafkaErrorCode.POLICY_VIOLATION;
    default:
      return KafkaErrorCode.UNKNOWN_SERVER_ERROR;
  }
}

export function errorMessageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
