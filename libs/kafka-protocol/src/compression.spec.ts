import { execFileSync } from 'node:child_process';
import { gzipSync } from 'node:zlib';
import { compressSync as snappyRaw } from 'snappy';
import { compressRecords, decompressRecords } from './compression.js';
import { Compression, KafkaProtocolReason } from './index.js';

/* eslint-disable @typescript-eslint/no-require-imports */
const kafkajsSnappy = (
  require('kafkajs-snappy') as () => {
    compress(encoder: { buffer: Buffer }): Promise<Buffer>;
    decompress(buffer: Buffer): Promise<Buffer>;
  }
)();
/* eslint-enable @typescript-eslint/no-require-imports */

const MAX = 64 * 1024 * 1024;
// Compressible but not trivially so: 200 KiB spans several xerial chunks and LZ4 blocks.
const text = Buffer.from(Array.from({ length: 20_000 }, (_, index) => `record-${index % 977};`).join(''));
const corrupt = expect.objectContaining({ reason: KafkaProtocolReason.KAFKA_CORRUPT_RECORD });

describe('record compression', () => {
  it('reads raw snappy as kafkajs-snappy and librdkafka write it', async () => {
    const fromKafkajs = await kafkajsSnappy.compress({ buffer: text });
    expect(decompressRecords(Compression.SNAPPY, fromKafkajs, MAX)).toEqual(text);
  });

  it('writes xerial-framed snappy, as the Java client does, in chunks kafkajs-snappy reads', async () => {
    const written = compressRecords(Compression.SNAPPY, text);
    expect(written.subarray(1, 7).toString()).toBe('SNAPPY');
    expect(written.readUInt32BE(16)).toBeLessThan(32 * 1024);
    expect(await kafkajsSnappy.decompress(written)).toEqual(text);
    expect(decompressRecords(Compression.SNAPPY, written, MAX)).toEqual(text);
  });

  it('refuses snappy whose stated length passes the bound before inflating it', () => {
    const bomb = snappyRaw(Buffer.alloc(200_000));
    expect(() => decompressRecords(Compression.SNAPPY, bomb, 100_000)).toThrow(corrupt);
    expect(() => decompressRecords(Compression.SNAPPY, Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), MAX)).toThrow(
      corrupt,
    );
  });

  it('reads and writes the LZ4 frame format the lz4 tool reads and writes', () => {
    const fromTool = execFileSync('lz4', ['-c', '-q'], { input: text, maxBuffer: MAX });
    expect(decompressRecords(Compression.LZ4, fromTool, MAX)).toEqual(text);
    const written = compressRecords(Compression.LZ4, text);
    expect(execFileSync('lz4', ['-d', '-c', '-q'], { input: written, maxBuffer: MAX })).toEqual(text);
  });

  it('refuses an LZ4 frame with a bad block size, a cut end, or what is not an LZ4 frame', () => {
    const written = compressRecords(Compression.LZ4, text);
    expect(() => decompressRecords(Compression.LZ4, written.subarray(0, written.length - 6), MAX)).toThrow(corrupt);
    const badBlock = Buffer.from(written);
    badBlock.writeUInt32LE(0x7fffffff, 7);
    expect(() => decompressRecords(Compression.LZ4, badBlock, MAX)).toThrow(corrupt);
    expect(() => decompressRecords(Compression.LZ4, gzipSync(text), MAX)).toThrow(corrupt);
  });

  it('reads zstd frames the zstd tool writes, within the bound', () => {
    const fromTool = execFileSync('zstd', ['-c', '-q', '-3'], { input: text, maxBuffer: MAX });
    expect(decompressRecords(Compression.ZSTD, fromTool, MAX)).toEqual(text);
    expect(() => decompressRecords(Compression.ZSTD, fromTool, 10_000)).toThrow(corrupt);
    expect(() => decompressRecords(Compression.ZSTD, fromTool.subarray(0, fromTool.length - 10), MAX)).toThrow(corrupt);
  });

  it('writes zstd through node:zlib where the running Node has it, and says why not otherwise', () => {
    if (process.versions.node.localeCompare('22.15.0', undefined, { numeric: true }) >= 0) {
      const written = compressRecords(Compression.ZSTD, text);
      expect(execFileSync('zstd', ['-d', '-c', '-q'], { input: written, maxBuffer: MAX })).toEqual(text);
    } else {
      expect(() => compressRecords(Compression.ZSTD, text)).toThrow(
        expect.objectContaining({ reason: KafkaProtocolReason.KAFKA_UNSUPPORTED_COMPRESSION }),
      );
    }
  });
});
