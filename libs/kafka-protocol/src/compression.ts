import * as zlib from 'node:zlib';
import { Decompress as ZstdDecompress } from 'fzstd';
import { compressFrameSync as lz4Compress, decompressFrameSync as lz4Decompress } from 'lz4-napi';
import { compressSync as snappyCompress, uncompressSync as snappyUncompress } from 'snappy';
import {
  XERIAL_HEADER_BYTES,
  XERIAL_MAGIC,
  isXerial,
  lz4FrameBound,
  snappyRawLength,
  xerialChunks,
} from './compression-bounds.js';
import { KafkaProtocolReason, protocolError } from './protocol-error.js';

export const Compression = { NONE: 0, GZIP: 1, SNAPPY: 2, LZ4: 3, ZSTD: 4 } as const;
export type CompressionValue = (typeof Compression)[keyof typeof Compression];

/** Java's SnappyOutputStream block size: what a xerial chunk holds before compression. */
const XERIAL_CHUNK_BYTES = 32 * 1024;

// zstd arrives in node:zlib with Node 22.15; fzstd (pure JS) decodes it on every Node the project supports.
type ZstdCompressSync = (bytes: Buffer) => Buffer;
const zstdCompressSync = (zlib as unknown as { zstdCompressSync?: ZstdCompressSync }).zstdCompressSync;

function corrupt(name: string, message: string): Error {
  return protocolError(KafkaProtocolReason.KAFKA_CORRUPT_RECORD, `${name} records: ${message}`);
}

function checkBound(name: string, bound: number, maxBytes: number): void {
  if (bound > maxBytes) throw corrupt(name, `they would expand to ${bound} bytes, more than ${maxBytes}`);
}

function snappyRaw(block: Buffer, maxBytes: number): Buffer {
  checkBound('snappy', snappyRawLength(block), maxBytes);
  return snappyUncompress(block, { asBuffer: true }) as Buffer;
}

/** Raw snappy (librdkafka, kafkajs-snappy) or xerial-framed (the Java client): both are read. */
function unsnappy(bytes: Buffer, maxBytes: number): Buffer {
  if (!isXerial(bytes)) return snappyRaw(bytes, maxBytes);
  const chunks = xerialChunks(bytes);
  checkBound(
    'snappy',
    chunks.reduce((sum, chunk) => sum + snappyRawLength(chunk), 0),
    maxBytes,
  );
  return Buffer.concat(chunks.map((chunk) => snappyRaw(chunk, maxBytes)));
}

function unzstd(bytes: Buffer, maxBytes: number): Buffer {
  const parts: Uint8Array[] = [];
  let total = 0;
  let ended = false;
  const stream = new ZstdDecompress((chunk, final) => {
    total += chunk.length;
    checkBound('zstd', total, maxBytes);
    parts.push(chunk);
    ended ||= final === true;
  });
  stream.push(bytes, true);
  if (!ended) throw corrupt('zstd', 'the frame ends early');
  return Buffer.concat(parts, total);
}

function inflate(compression: number, bytes: Buffer, maxBytes: number): Buffer {
  switch (compression) {
    case Compression.GZIP:
      return zlib.gunzipSync(bytes, { maxOutputLength: maxBytes });
    case Compression.SNAPPY:
      return unsnappy(bytes, maxBytes);
    case Compression.LZ4:
      checkBound('lz4', lz4FrameBound(bytes), maxBytes);
      return lz4Decompress(bytes);
    case Compression.ZSTD:
      return unzstd(bytes, maxBytes);
    default:
      throw protocolError(
        KafkaProtocolReason.KAFKA_UNSUPPORTED_COMPRESSION,
        `compression type ${compression} is not one Kafka defines`,
      );
  }
}

const NAMES: Record<number, string> = { 1: 'gzip', 2: 'snappy', 3: 'lz4', 4: 'zstd' };

/**
 * The records section of a batch, inflated within `maxBytes`. Anything a codec
 * rejects (a bad frame, a checksum, a bound) fails KAFKA_CORRUPT_RECORD.
 */
export function decompressRecords(compression: number, bytes: Buffer, maxBytes: number): Buffer {
  if (compression === Compression.NONE) return bytes;
  try {
    const records = inflate(compression, bytes, maxBytes);
    checkBound(NAMES[compression] ?? 'compressed', records.length, maxBytes);
    return records;
  } catch (error) {
    const reason = (error as { reason?: string }).reason;
    if (reason !== undefined) throw error;
    throw corrupt(NAMES[compression] ?? 'compressed', `they do not inflate: ${(error as Error).message}`);
  }
}

/** Java's xerial framing, which every client reads (librdkafka and kafkajs-snappy read raw snappy too). */
function xerial(bytes: Buffer): Buffer {
  const header = Buffer.alloc(XERIAL_HEADER_BYTES);
  XERIAL_MAGIC.copy(header);
  header.writeInt32BE(1, 8);
  header.writeInt32BE(1, 12);
  const parts: Buffer[] = [header];
  for (let offset = 0; offset < bytes.length; offset += XERIAL_CHUNK_BYTES) {
    const chunk = snappyCompress(bytes.subarray(offset, offset + XERIAL_CHUNK_BYTES));
    const size = Buffer.alloc(4);
    size.writeUInt32BE(chunk.length);
    parts.push(size, chunk);
  }
  return Buffer.concat(parts);
}

/** The records section compressed as `compression`; the LZ4 frame is the one Kafka writes (KIP-57). */
export function compressRecords(compression: CompressionValue, bytes: Buffer): Buffer {
  switch (compression) {
    case Compression.NONE:
      return bytes;
    case Compression.GZIP:
      return zlib.gzipSync(bytes);
    case Compression.SNAPPY:
      return xerial(bytes);
    case Compression.LZ4:
      return lz4Compress(bytes);
    case Compression.ZSTD:
      if (zstdCompressSync !== undefined) return zstdCompressSync(bytes);
      throw protocolError(
        KafkaProtocolReason.KAFKA_UNSUPPORTED_COMPRESSION,
        `writing zstd needs node:zlib's zstd (Node 22.15 or later); this is Node ${process.versions.node}`,
      );
    default:
      throw protocolError(KafkaProtocolReason.KAFKA_UNSUPPORTED_COMPRESSION, `cannot write compression ${compression}`);
  }
}
