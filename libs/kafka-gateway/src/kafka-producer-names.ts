/** What the owners' producer names of Kafka's idempotent producers start with. */
export const KAFKA_PRODUCER_PREFIX = 'kafka-';
const KAFKA_PRODUCER_NAME = /^kafka-(\d+)-(\d+)$/;
const MAX_PRODUCER_ID = 2n ** 63n - 1n;
const MAX_PRODUCER_EPOCH = 32_767;

/**
 * The owner's producer name of an idempotent Kafka producer: the epoch is
 * part of it, since a new epoch restarts sequences.
 */
export function kafkaProducerName(producerId: bigint, producerEpoch: number): string {
  return `${KAFKA_PRODUCER_PREFIX}${producerId}-${producerEpoch}`;
}

/** The Kafka producer id and epoch of a name kafkaProducerName made; undefined for any other (an SDK producer's). */
export function kafkaProducerOf(name: string): { producerId: bigint; producerEpoch: number } | undefined {
  const match = KAFKA_PRODUCER_NAME.exec(name);
  if (match === null) return undefined;
  const producerId = BigInt(match[1]!);
  const producerEpoch = Number(match[2]);
  if (producerId > MAX_PRODUCER_ID || producerEpoch > MAX_PRODUCER_EPOCH) return undefined;
  return { producerId, producerEpoch };
}
