import { crc32c } from '@node-rs/crc32';
import { ByteReader } from './byte-reader.js';
import { ByteWriter, varintBytes, varlongBytes } from './byte-writer.js';
import { Compression, type CompressionValue, compressRecords, decompressRecords } from './compression.js';
import { KafkaProtocolReason, protocolError } from './protocol-error.js';

/** Bytes of a RecordBatch v2 before its records (baseOffset .. recordCount). */
export const RECORD_BATCH_OVERHEAD_BYTES = 61;
/** Offset of the CRC inside a batch, and of the first byte it covers (the attributes). */
const CRC_OFFSET = 17;
const CRC_COVERS_FROM = 21;
/** Bytes of baseOffset + batchLength: batchLength counts everything after them. */
const LOG_OVERHEAD_BYTES = 12;
/** Default bound on the records a compressed batch may expand to. */
export const DEFAULT_MAX_DECOMPRESSED_BYTES = 64 * 1024 * 1024;

export { Compression, type CompressionValue } from './compression.js';

export interface RecordHeader {
  readonly key: string;
  readonly value: Buffer | null;
}

export interface KafkaRecord {
  readonly offsetDelta: number;
  readonly timestampDelta: bigint;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: readonly RecordHeader[];
}

export interface RecordBatch {
  readonly baseOffset: bigint;
  readonly partitionLeaderEpoch: number;
  readonly compression: CompressionValue;
  /** 0 CreateTime, 1 LogAppendTime. */
  readonly timestampType: number;
  readonly transactional: boolean;
  readonly control: boolean;
  readonly lastOffsetDelta: number;
  readonly baseTimestamp: bigint;
  readonly maxTimestamp: bigint;
  readonly producerId: bigint;
  readonly producerEpoch: number;
  readonly baseSequence: number;
  readonly records: readonly KafkaRecord[];
  /** Bytes the batch took as it was sent, compressed records included (Kafka's sizeInBytes); set by the decoder. */
  readonly sizeInBytes?: number;
}

export interface DecodeBatchOptions {
  maxDecompressedBytes?: number;
}

function corrupt(message: string): Error {
  return protocolError(KafkaProtocolReason.KAFKA_CORRUPT_RECORD, message);
}

function readRecord(reader: ByteReader): KafkaRecord {
  const length = reader.varint('record length');
  if (length < 0 || length > reader.remaining) throw corrupt(`record length ${length} with ${reader.remaining} left`);
  const record = new ByteReader(reader.bytes(length, 'record'));
  record.int8('record attributes');
  const timestampDelta = record.varlong('timestamp delta');
  const offsetDelta = record.varint('offset delta');
  const key = readVarBytes(record, 'record key');
  const value = readVarBytes(record, 'record value');
  const headerCount = record.varint('header count');
  if (headerCount < 0 || headerCount * 2 > record.remaining) throw corrupt(`header count ${headerCount}`);
  const headers: RecordHeader[] = [];
  for (let index = 0; index < headerCount; index++) {
    const headerKey = readVarBytes(record, 'header key');
    if (headerKey === null) throw corrupt('a header key is null');
    headers.push({ key: headerKey.toString('utf8'), value: readVarBytes(record, 'header value') });
  }
  record.expectEnd('record');
  return { offsetDelta, timestampDelta, key, value, headers };
}

function readVarBytes(reader: ByteReader, what: string): Buffer | null {
  const length = reader.varint(what);
  if (length === -1) return null;
  if (length < -1) throw corrupt(`${what} has length ${length}`);
  return reader.bytes(length, what);
}

/** Decodes one batch from `reader`, whose next bytes are a whole batch. */
function readBatch(reader: ByteReader, options: DecodeBatchOptions): RecordBatch {
  const start = reader.offset;
  const baseOffset = reader.int64('base offset');
  const batchLength = reader.int32('batch length');
  if (batchLength < RECORD_BATCH_OVERHEAD_BYTES - LOG_OVERHEAD_BYTES || batchLength > reader.remaining) {
    throw corrupt(`batch length ${batchLength} with ${reader.remaining} bytes left`);
  }
  const body = reader.bytes(batchLength, 'record batch');
  const batch = new ByteReader(body);
  const partitionLeaderEpoch = batch.int32('partition leader epoch');
  const magic = batch.int8('magic');
  if (magic !== 2) throw corrupt(`record batch magic ${magic} at offset ${start}: only magic 2 is read`);
  const crc = batch.uint32('crc');
  const actual = crc32c(body.subarray(CRC_COVERS_FROM - LOG_OVERHEAD_BYTES));
  if (crc !== actual) throw corrupt(`record batch CRC-32C is ${crc}, the bytes give ${actual}`);
  const attributes = batch.int16('attributes');
  const header = {
    baseOffset,
    partitionLeaderEpoch,
    compression: (attributes & 0x07) as CompressionValue,
    timestampType: (attributes >> 3) & 1,
    transactional: (attributes & 0x10) !== 0,
    control: (attributes & 0x20) !== 0,
    lastOffsetDelta: batch.int32('last offset delta'),
    baseTimestamp: batch.int64('base timestamp'),
    maxTimestamp: batch.int64('max timestamp'),
    producerId: batch.int64('producer id'),
    producerEpoch: batch.int16('producer epoch'),
    baseSequence: batch.int32('base sequence'),
  };
  const count = batch.int32('record count');
  const raw = decompressRecords(
    header.compression,
    batch.bytes(batch.remaining),
    options.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES,
  );
  const records = readRecords(new ByteReader(raw), count);
  return { ...header, records, sizeInBytes: LOG_OVERHEAD_BYTES + batchLength };
}

function readRecords(reader: ByteReader, count: number): KafkaRecord[] {
  // Every record takes at least 7 bytes, so the count is checked against the bytes before reading.
  if (count < 0 || count * 7 > reader.remaining) throw corrupt(`record count ${count} with ${reader.remaining} bytes`);
  const records: KafkaRecord[] = [];
  for (let index = 0; index < count; index++) records.push(readRecord(reader));
  reader.expectEnd('records');
  return records;
}

/**
 * Decodes the record batches of a Produce request's records field. Only
 * RecordBatch v2 (magic 2) is read; a partial or corrupt batch fails
 * KAFKA_CORRUPT_RECORD, never anything else.
 */
export function decodeRecordBatches(bytes: Buffer, options: DecodeBatchOptions = {}): RecordBatch[] {
  const reader = new ByteReader(bytes);
  const batches: RecordBatch[] = [];
  while (reader.remaining > 0) {
    if (reader.remaining < RECORD_BATCH_OVERHEAD_BYTES)
      throw corrupt(`${reader.remaining} bytes are not a record batch`);
    batches.push(readBatch(reader, options));
  }
  return batches;
}

function writeVarBytes(writer: ByteWriter, value: Uint8Array | null): void {
  if (value === null) writer.varint(-1);
  else writer.varint(value.length).raw(value);
}

function varBytesSize(value: Uint8Array | null): number {
  return value === null ? varintBytes(-1) : varintBytes(value.length) + value.length;
}

/** A record with the size of its body (what its length prefix says) and its header keys as UTF-8, known before it is written. */
interface SizedRecord {
  readonly record: KafkaRecord;
  readonly headerKeys: readonly Buffer[];
  readonly bodyBytes: number;
}

function sized(record: KafkaRecord): SizedRecord {
  const headerKeys = record.headers.map((header) => Buffer.from(header.key, 'utf8'));
  let bodyBytes =
    1 +
    varlongBytes(record.timestampDelta) +
    varintBytes(record.offsetDelta) +
    varBytesSize(record.key) +
    varBytesSize(record.value) +
    varintBytes(record.headers.length);
  record.headers.forEach((header, index) => {
    bodyBytes += varBytesSize(headerKeys[index]!) + varBytesSize(header.value);
  });
  return { record, headerKeys, bodyBytes };
}

/** The record's length and body, straight into the batch's writer: no buffer of its own to copy from. */
function writeRecord(writer: ByteWriter, { record, headerKeys, bodyBytes }: SizedRecord): void {
  writer.varint(bodyBytes);
  const start = writer.length;
  writer.int8(0).varlong(record.timestampDelta).varint(record.offsetDelta);
  writeVarBytes(writer, record.key);
  writeVarBytes(writer, record.value);
  writer.varint(record.headers.length);
  record.headers.forEach((header, index) => {
    writeVarBytes(writer, headerKeys[index]!);
    writeVarBytes(writer, header.value);
  });
  if (writer.length - start !== bodyBytes) {
    throw protocolError(
      KafkaProtocolReason.KAFKA_BAD_VALUE,
      `a record took ${writer.length - start} bytes where its length says ${bodyBytes}`,
    );
  }
}

/**
 * Encodes one RecordBatch v2, uncompressed or compressed as its attributes
 * say, with its CRC-32C. Each record's size is worked out first, so an
 * uncompressed batch is written into one buffer of its exact size, records
 * and all: a Fetch answers every entry as such a batch, and building each
 * record in a buffer of its own, then the records in another, copied every
 * byte of the payloads three more times, each copy a buffer to collect.
 */
export function encodeRecordBatch(batch: RecordBatch): Buffer {
  const records = batch.records.map(sized);
  const recordBytes = records.reduce((sum, record) => sum + varintBytes(record.bodyBytes) + record.bodyBytes, 0);
  let compressed: Buffer | undefined;
  if (batch.compression !== Compression.NONE) {
    const plain = new ByteWriter(recordBytes);
    for (const record of records) writeRecord(plain, record);
    compressed = compressRecords(batch.compression, plain.finish());
  }
  const attributes =
    batch.compression | (batch.timestampType << 3) | (batch.transactional ? 0x10 : 0) | (batch.control ? 0x20 : 0);
  const writer = new ByteWriter(RECORD_BATCH_OVERHEAD_BYTES + (compressed?.length ?? recordBytes));
  writer.int64(batch.baseOffset).int32(0).int32(batch.partitionLeaderEpoch).int8(2).uint32(0);
  writer.int16(attributes).int32(batch.lastOffsetDelta).int64(batch.baseTimestamp).int64(batch.maxTimestamp);
  writer.int64(batch.producerId).int16(batch.producerEpoch).int32(batch.baseSequence).int32(batch.records.length);
  if (compressed !== undefined) writer.raw(compressed);
  else for (const record of records) writeRecord(writer, record);
  writer.patchInt32(8, writer.length - LOG_OVERHEAD_BYTES);
  writer.patchUint32(CRC_OFFSET, crc32c(writer.view(CRC_COVERS_FROM)));
  return writer.finish();
}

/** An idempotent producer as a record batch names it: its id, epoch and the batch's first sequence. */
export interface BatchProducerIds {
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
}

/**
 * An uncompressed, non-transactional batch of keyless records without
 * headers from `baseOffset`, every record at `timestampMs`: what a producer
 * sends (idempotent when `producer` is given, producer id -1 otherwise) and
 * what the gateway's Fetch answers look like, for benches and specs that need
 * a batch of given values.
 */
export function encodePlainRecordBatch(
  baseOffset: bigint,
  values: readonly Buffer[],
  timestampMs: bigint,
  producer: BatchProducerIds = { producerId: -1n, producerEpoch: -1, baseSequence: -1 },
): Buffer {
  return encodeRecordBatch({
    baseOffset,
    partitionLeaderEpoch: 0,
    compression: Compression.NONE,
    timestampType: 0,
    transactional: false,
    control: false,
    lastOffsetDelta: values.length - 1,
    baseTimestamp: timestampMs,
    maxTimestamp: timestampMs,
    ...producer,
    records: values.map((value, index) => ({ offsetDelta: index, timestampDelta: 0n, key: null, value, headers: [] })),
  });
}
