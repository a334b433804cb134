import { crc32c } from '@node-rs/crc32';
import {
  Compression,
  decodeRecordBatches,
  encodePlainRecordBatch,
  encodeRecordBatch,
  KafkaProtocolReason,
  type RecordBatch,
} from './index.js';

/* eslint-disable @typescript-eslint/no-require-imports */
const KafkajsRecordBatch = (
  require('kafkajs/src/protocol/recordBatch/v0') as { RecordBatch: (options: object) => Promise<{ buffer: Buffer }> }
).RecordBatch;
const KafkajsRecord = require('kafkajs/src/protocol/recordBatch/record/v0') as (options: object) => unknown;
const kafkajsBatchDecoder = require('kafkajs/src/protocol/recordBatch/v0/decoder') as (decoder: unknown) => Promise<{
  firstOffset: string;
  records: {
    offset: string;
    key: Buffer | null;
    value: Buffer | null;
    headers: Record<string, Buffer>;
    timestamp: string;
  }[];
}>;
const KafkajsDecoder = require('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => unknown;
const kafkajsCompression = require('kafkajs/src/protocol/message/compression') as {
  Types: { GZIP: number; None: number };
};
/* eslint-enable @typescript-eslint/no-require-imports */

function batchOf(records: RecordBatch['records'], overrides: Partial<RecordBatch> = {}): RecordBatch {
  return {
    baseOffset: 100n,
    partitionLeaderEpoch: 0,
    compression: Compression.NONE,
    timestampType: 0,
    transactional: false,
    control: false,
    lastOffsetDelta: records.length - 1,
    baseTimestamp: 1_700_000_000_000n,
    maxTimestamp: 1_700_000_000_000n + BigInt(records.length),
    producerId: -1n,
    producerEpoch: -1,
    baseSequence: -1,
    records,
    ...overrides,
  };
}

const threeRecords: RecordBatch['records'] = [
  { offsetDelta: 0, timestampDelta: 0n, key: Buffer.from('k0'), value: Buffer.from('v0'), headers: [] },
  {
    offsetDelta: 1,
    timestampDelta: 1n,
    key: null,
    value: Buffer.alloc(300, 7),
    headers: [{ key: 'h', value: Buffer.from('x') }],
  },
  { offsetDelta: 2, timestampDelta: 2n, key: Buffer.from('k2'), value: null, headers: [{ key: 'n', value: null }] },
];

describe('RecordBatch v2', () => {
  it('encodes a plain batch: uncompressed, no producer, keyless records at one time stamp from the base offset', () => {
    const values = [Buffer.from('a'), Buffer.from('bc')];
    const [batch] = decodeRecordBatches(encodePlainRecordBatch(40n, values, 1_700_000_000_000n));
    expect(batch).toMatchObject({
      baseOffset: 40n,
      compression: Compression.NONE,
      transactional: false,
      lastOffsetDelta: 1,
      maxTimestamp: 1_700_000_000_000n,
      producerId: -1n,
    });
    expect(
      batch!.records.map((record) => [record.offsetDelta, record.key, Buffer.from(record.value!).toString()]),
    ).toEqual([
      [0, null, 'a'],
      [1, null, 'bc'],
    ]);
  });

  it.each([
    ['uncompressed', Compression.NONE],
    ['gzip', Compression.GZIP],
    ['snappy', Compression.SNAPPY],
    ['lz4', Compression.LZ4],
  ])('round-trips a %s batch with keys, null values and headers', (_name, compression) => {
    const batch = batchOf(threeRecords, { compression });
    const encoded = encodeRecordBatch(batch);
    const [decoded, ...rest] = decodeRecordBatches(encoded);
    expect(rest).toEqual([]);
    // The decoder also tells the batch's size as sent, which message.max.bytes bounds.
    expect(decoded).toEqual({ ...batch, sizeInBytes: encoded.length });
  });

  it('writes every varint width as the decoder reads it: deltas, lengths and header keys at each boundary', async () => {
    // Zigzag widths change at 64, 8192, 2^20 and 2^27; deltas past 32 bits take the bigint path.
    const offsetDeltas = [0, 63, 64, 8191, 8192, 2 ** 20 - 1, 2 ** 20, 2 ** 27, 2 ** 31 - 1];
    const timestampDeltas = [0n, -1n, -64n, -65n, 63n, 64n, 2n ** 31n - 1n, 2n ** 31n, -(2n ** 31n), -(2n ** 31n) - 1n];
    timestampDeltas.push(2n ** 40n, -(2n ** 62n), 2n ** 63n - 1n);
    const lengths = [0, 63, 64, 8191, 8192];
    const records: RecordBatch['records'] = timestampDeltas.map((timestampDelta, index) => ({
      offsetDelta: offsetDeltas[index % offsetDeltas.length]!,
      timestampDelta,
      key: index % 3 === 0 ? null : Buffer.alloc(lengths[index % lengths.length]!, 1),
      value: Buffer.alloc(lengths[(index + 2) % lengths.length]!, 2),
      headers: [
        { key: index % 2 === 0 ? 'ключ' : '🔑'.repeat(20), value: index % 4 === 0 ? null : Buffer.alloc(64, 3) },
      ],
    }));
    for (const compression of [Compression.NONE, Compression.GZIP]) {
      const batch = batchOf(records, { compression, lastOffsetDelta: 2 ** 31 - 1 });
      const encoded = encodeRecordBatch(batch);
      expect(decodeRecordBatches(encoded)).toEqual([{ ...batch, sizeInBytes: encoded.length }]);
    }
    // And as another client reads them (its timestamps are base + delta, so the delta that overflows 64 bits is left out).
    const read = await kafkajsBatchDecoder(new KafkajsDecoder(encodeRecordBatch(batchOf(records))));
    const timestamps = timestampDeltas.map((delta) => String(1_700_000_000_000n + delta));
    expect(read.records.map((record) => record.timestamp).slice(0, -1)).toEqual(timestamps.slice(0, -1));
  });

  it('reads batches kafkajs writes, uncompressed and gzip', async () => {
    for (const compression of [kafkajsCompression.Types.None, kafkajsCompression.Types.GZIP]) {
      const records = [
        KafkajsRecord({ key: 'a', value: 'one', headers: { trace: 't-1' }, offsetDelta: 0, timestampDelta: 0 }),
        KafkajsRecord({ key: null, value: 'two', offsetDelta: 1, timestampDelta: 5 }),
      ];
      const encoded = await KafkajsRecordBatch({
        compression,
        records,
        firstTimestamp: 1000,
        maxTimestamp: 1005,
        lastOffsetDelta: 1,
      });
      const [batch] = decodeRecordBatches(encoded.buffer);
      expect(batch!.compression).toBe(compression);
      expect(batch!.baseTimestamp).toBe(1000n);
      expect(batch!.records.map((record) => record.value?.toString())).toEqual(['one', 'two']);
      expect(batch!.records[0]!.headers).toEqual([{ key: 'trace', value: Buffer.from('t-1') }]);
      expect(batch!.records[1]!.key).toBeNull();
      expect(batch!.records[1]!.timestampDelta).toBe(5n);
    }
  });

  it('writes batches kafkajs reads, with offsets and timestamps', async () => {
    const encoded = encodeRecordBatch(batchOf(threeRecords));
    const read = await kafkajsBatchDecoder(new KafkajsDecoder(encoded));
    expect(read.firstOffset).toBe('100');
    expect(read.records.map((record) => record.offset)).toEqual(['100', '101', '102']);
    expect(read.records[1]!.headers).toEqual({ h: Buffer.from('x') });
    expect(read.records[2]!.timestamp).toBe('1700000000002');
  });

  it('refuses a bad CRC-32C, a truncated batch, an old magic and trailing garbage', () => {
    const good = encodeRecordBatch(batchOf(threeRecords));
    const flipped = Buffer.from(good);
    flipped[good.length - 1] = (flipped[good.length - 1] as number) ^ 0xff;
    const corrupt = expect.objectContaining({ reason: KafkaProtocolReason.KAFKA_CORRUPT_RECORD });
    expect(() => decodeRecordBatches(flipped)).toThrow(corrupt);
    expect(() => decodeRecordBatches(good.subarray(0, good.length - 5))).toThrow(corrupt);
    const oldMagic = Buffer.from(good);
    oldMagic[16] = 1;
    expect(() => decodeRecordBatches(oldMagic)).toThrow(corrupt);
    expect(() => decodeRecordBatches(Buffer.concat([good, Buffer.alloc(20)]))).toThrow(corrupt);
  });

  it('refuses a record count the bytes cannot hold, even with a valid CRC', () => {
    const good = encodeRecordBatch(batchOf(threeRecords));
    const lying = Buffer.from(good);
    lying.writeInt32BE(1_000_000, 57);
    lying.writeUInt32BE(crc32c(lying.subarray(21)), 17);
    expect(() => decodeRecordBatches(lying)).toThrow(
      expect.objectContaining({ reason: KafkaProtocolReason.KAFKA_CORRUPT_RECORD }),
    );
  });

  it('refuses the compression types Kafka does not define with KAFKA_UNSUPPORTED_COMPRESSION', () => {
    for (const compression of [5, 6, 7]) {
      const good = Buffer.from(encodeRecordBatch(batchOf(threeRecords)));
      good.writeInt16BE(compression, 21);
      good.writeUInt32BE(crc32c(good.subarray(21)), 17);
      expect(() => decodeRecordBatches(good)).toThrow(
        expect.objectContaining({ reason: KafkaProtocolReason.KAFKA_UNSUPPORTED_COMPRESSION }),
      );
    }
  });

  it('refuses records that are not what their snappy, lz4 or zstd attribute says with KAFKA_CORRUPT_RECORD', () => {
    for (const compression of [Compression.SNAPPY, Compression.LZ4, Compression.ZSTD]) {
      const good = Buffer.from(encodeRecordBatch(batchOf(threeRecords)));
      good.writeInt16BE(compression, 21);
      good.writeUInt32BE(crc32c(good.subarray(21)), 17);
      expect(() => decodeRecordBatches(good)).toThrow(
        expect.objectContaining({ reason: KafkaProtocolReason.KAFKA_CORRUPT_RECORD }),
      );
    }
  });

  it.each([
    ['gzip', Compression.GZIP],
    ['snappy', Compression.SNAPPY],
    ['lz4', Compression.LZ4],
  ])('bounds what a %s batch may inflate to', (_name, compression) => {
    const big = batchOf(
      [{ offsetDelta: 0, timestampDelta: 0n, key: null, value: Buffer.alloc(1_000_000), headers: [] }],
      { compression },
    );
    expect(() => decodeRecordBatches(encodeRecordBatch(big), { maxDecompressedBytes: 10_000 })).toThrow(
      expect.objectContaining({ reason: KafkaProtocolReason.KAFKA_CORRUPT_RECORD }),
    );
  });
});
