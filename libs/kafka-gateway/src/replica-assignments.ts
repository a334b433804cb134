import { KafkaErrorCode } from '@ledgerline/kafka-protocol';

/** Why an admin request's partitions or replica assignments are refused: Kafka's error code and message. */
export interface AssignmentRefusal {
  readonly errorCode: number;
  readonly errorMessage: string;
}

function invalidAssignment(errorMessage: string): AssignmentRefusal {
  return { errorCode: KafkaErrorCode.INVALID_REPLICA_ASSIGNMENT, errorMessage };
}

/**
 * Checks manual replica assignments as Kafka's controller does
 * (ReplicationControlManager.validateManualPartitionAssignment), where the
 * brokers are the live gateways: each partition lists one or more of them,
 * none twice, and every partition as many as the others. Gateways hold no
 * data and each serves every partition, so an assignment that holds decides
 * nothing but how many partitions there are; Metadata keeps naming the
 * answering gateway the leader and only replica.
 */
export function checkAssignments(
  assignments: readonly (readonly number[])[],
  liveBrokers: ReadonlySet<number>,
): AssignmentRefusal | undefined {
  let replicas: number | undefined;
  for (const brokerIds of assignments) {
    if (brokerIds.length === 0) {
      return invalidAssignment('The manual partition assignment includes an empty replica list.');
    }
    const sorted = [...brokerIds].sort((a, b) => a - b);
    for (const [index, brokerId] of sorted.entries()) {
      if (!liveBrokers.has(brokerId)) {
        return invalidAssignment(
          `The manual partition assignment includes broker ${brokerId}, but no such broker is registered.`,
        );
      }
      if (index > 0 && sorted[index - 1] === brokerId) {
        return invalidAssignment(`The manual partition assignment includes the broker ${brokerId} more than once.`);
      }
    }
    if (replicas !== undefined && brokerIds.length !== replicas) {
      return invalidAssignment(
        `The manual partition assignment includes a partition with ${brokerIds.length} replica(s), but this is not ` +
          `consistent with previous partitions, which have ${replicas} replica(s).`,
      );
    }
    replicas = brokerIds.length;
  }
  return undefined;
}

/**
 * The partition count a CreateTopics topic with manual assignments asks for,
 * or why it is refused, as Kafka's controller decides (ReplicationControlManager.createTopic):
 * num_partitions and replication_factor must be -1, each partition assigned
 * once, the partitions 0 to n-1, and the assignments valid.
 */
export function partitionsOfAssignments(
  topic: {
    numPartitions: number;
    replicationFactor: number;
    assignments: readonly { partitionIndex: number; brokerIds: readonly number[] }[];
  },
  liveBrokers: ReadonlySet<number>,
): number | AssignmentRefusal {
  if (topic.replicationFactor !== -1) {
    return {
      errorCode: KafkaErrorCode.INVALID_REPLICATION_FACTOR,
      errorMessage: 'A manual partition assignment was specified, but replication factor was not set to -1.',
    };
  }
  if (topic.numPartitions !== -1) {
    return {
      errorCode: KafkaErrorCode.INVALID_PARTITIONS,
      errorMessage: 'A manual partition assignment was specified, but numPartitions was not set to -1.',
    };
  }
  const seen = new Set<number>();
  for (const assignment of topic.assignments) {
    if (seen.has(assignment.partitionIndex)) {
      return invalidAssignment(
        `Found multiple manual partition assignments for partition ${assignment.partitionIndex}`,
      );
    }
    seen.add(assignment.partitionIndex);
  }
  const refused = checkAssignments(
    topic.assignments.map((assignment) => assignment.brokerIds),
    liveBrokers,
  );
  if (refused !== undefined) return refused;
  for (let index = 0; index < seen.size; index++) {
    if (!seen.has(index)) return invalidAssignment('partitions should be a consecutive 0-based integer sequence');
  }
  return seen.size;
}
