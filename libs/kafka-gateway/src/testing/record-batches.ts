import { encodePlainRecordBatch } from '@ledgerline/kafka-protocol';

/** An idempotent producer as a record batch names it. */
export interface BatchProducer {
  producerId: bigint;
  /** 0 when not given. */
  producerEpoch?: number;
  baseSequence: number;
}

/**
 * One uncompressed record batch of `values` (keyless, no headers), stamped
 * `timestampMs` (now by default), as a Kafka producer sends it: idempotent
 * when `producer` is given, plain (producer id -1) otherwise.
 */
export function recordBatchOf(
  values: readonly (string | Buffer)[],
  producer?: BatchProducer,
  timestampMs = BigInt(Date.now()),
): Buffer {
  const bytes = values.map((value) => (typeof value === 'string' ? Buffer.from(value) : value));
  const ids = producer === undefined ? undefined : { ...producer, producerEpoch: producer.producerEpoch ?? 0 };
  return encodePlainRecordBatch(0n, bytes, timestampMs, ids);
}
