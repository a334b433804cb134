import { Compression, encodeRecordBatch } from '@ledgerline/kafka-protocol';

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
  return encodeRecordBatch({
    baseOffset: 0n,
    partitionLeaderEpoch: 0,
    compression: Compression.NONE,
    timestampType: 0,
    transactional: false,
    control: false,
    lastOffsetDelta: values.length - 1,
    baseTimestamp: timestampMs,
    maxTimestamp: timestampMs,
    producerId: producer?.producerId ?? -1n,
    producerEpoch: producer === undefined ? -1 : (producer.producerEpoch ?? 0),
    baseSequence: producer?.baseSequence ?? -1,
    records: values.map((value, index) => ({
      offsetDelta: index,
      timestampDelta: 0n,
      key: null,
      value: typeof value === 'string' ? Buffer.from(value) : value,
      headers: [],
    })),
  });
}
