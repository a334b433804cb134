import { LedgerlineError } from '@ledgerline/errors';
import { KafkaErrorCode } from '@ledgerline/kafka-protocol';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';
import { kafkaErrorOf } from './kafka-errors.js';

/**
 * The Kafka error code of a failed topic admin call (CreateTopics,
 * CreatePartitions). A namespace at its maxTopics policy is a policy
 * refusing the request, POLICY_VIOLATION, not the MESSAGE_TOO_LARGE every
 * other RESOURCE_EXHAUSTED means to a producer.
 */
export function topicAdminErrorOf(error: unknown): number {
  if (error instanceof LedgerlineError && error.reason === MetadataServiceReason.TOO_MANY_TOPICS) {
    return KafkaErrorCode.POLICY_VIOLATION;
  }
  return kafkaErrorOf(error);
}
