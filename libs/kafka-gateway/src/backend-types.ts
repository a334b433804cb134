import type { Entry } from '@ledgerline/proto';
import type { StoredMessage } from './record-mapping.js';

export interface PublishEntry {
  messages: StoredMessage[];
  /** Deduplication (idempotent producers): `kafka-<producerId>-<epoch>`, the batch's base sequence. */
  producerName: string;
  sequenceId: bigint;
  /** True for an idempotent producer, which numbers its batches without gaps (PublishMessage.contiguous_sequence). */
  contiguousSequence: boolean;
  /** The batch's largest record timestamp, -1 when none has one (PublishMessage.max_event_time_ms). */
  maxTimestampMs: bigint;
}

export interface FetchResult {
  entries: Entry[];
  nextOffset: bigint;
}

/** What a group committed on a partition: the offset (-1 when none) and the commit's metadata ('' when none). */
export interface CommittedOffset {
  offset: bigint;
  metadata: string;
}

export interface OffsetAt {
  offset: bigint;
  timestampMs: bigint;
}

/** A producer as its partition's writer owner knows it (ListProducers' DedupProducer). */
export interface ProducerMark {
  /** `kafka-<producerId>-<epoch>`. */
  name: string;
  /** The highest sequence id stored: the last record's of its last batch. */
  lastSequenceId: bigint;
  /** When the owner stored its last batch; 0 when unknown. */
  lastPublishTimeMs: bigint;
}
