/** The stable reasons the Kafka gateway fails with (its own; the codec's are KafkaProtocolReason). */
export const GatewayReason = {
  /** A Kafka topic name that is neither a Kafka name nor tenant/namespace/topic. */
  INVALID_KAFKA_TOPIC: 'INVALID_KAFKA_TOPIC',
  /** The Kafka partition index is not one of the topic's partitions. */
  UNKNOWN_KAFKA_PARTITION: 'UNKNOWN_KAFKA_PARTITION',
  /** A call to the owners kept meeting moved or unloaded topics past its retries. */
  OWNER_NOT_REACHED: 'OWNER_NOT_REACHED',
  /** A record's timestamp is neither -1 (none) nor a time event time holds (Kafka's INVALID_TIMESTAMP). */
  INVALID_KAFKA_TIMESTAMP: 'INVALID_KAFKA_TIMESTAMP',
  /** A record batch is larger than message.max.bytes (kafkaMaxMessageBytes; Kafka's MESSAGE_TOO_LARGE). */
  KAFKA_MESSAGE_TOO_LARGE: 'KAFKA_MESSAGE_TOO_LARGE',
} as const;
