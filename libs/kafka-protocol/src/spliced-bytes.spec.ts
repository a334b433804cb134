import { ApiKey, apiSpec } from './api-table.js';
import { ByteReader } from './byte-reader.js';
import { ByteWriter } from './byte-writer.js';
import { decodeResponse, encodeResponse, encodeResponseChunks } from './messages.js';
import { decodeRecordBatches, encodePlainRecordBatch } from './record-batch.js';
import { MIN_SPLICED_CHUNK_BYTES, SplicedBytes } from './spliced-bytes.js';

/** A record batch of `count` records of `valueBytes` bytes each, from `baseOffset`. */
function batch(baseOffset: number, count: number, valueBytes: number): Buffer {
  const values = Array.from({ length: count }, (_, index) => Buffer.alloc(valueBytes, 65 + index));
  return encodePlainRecordBatch(BigInt(baseOffset), values, 1_700_000_000_000n);
}

function fetchAnswer(records: Buffer | SplicedBytes) {
  return {
    throttleTimeMs: 0,
    errorCode: 0,
    sessionId: 0,
    responses: [
      {
        topic: 'orders',
        topicId: Buffer.alloc(16, 1),
        partitions: [
          {
            partitionIndex: 0,
            errorCode: 0,
            highWatermark: 30n,
            lastStableOffset: 30n,
            logStartOffset: -1n,
            abortedTransactions: null,
            preferredReadReplica: -1,
            records,
          },
        ],
      },
    ],
  };
}

describe('SplicedBytes: a Fetch answer whose record batches are not copied', () => {
  const fetch = apiSpec(ApiKey.Fetch)!;
  const batches = [batch(0, 10, 1024), batch(10, 10, 1024), batch(20, 10, 1024)];

  it.each([11, 12, 16])(
    'v%d: the answer holds each batch as a chunk of its own, and its bytes are those of the copied answer',
    (version) => {
      const chunks = encodeResponseChunks(fetch, version, 7, fetchAnswer(new SplicedBytes(batches)));
      // The very buffers given, not copies of them: encoding a megabyte answer copied it three times.
      for (const record of batches) expect(chunks.filter((chunk) => chunk === record)).toHaveLength(1);
      const bytes = Buffer.concat(chunks);
      expect(bytes).toEqual(encodeResponse(fetch, version, 7, fetchAnswer(Buffer.concat(batches))));
      expect(bytes.readInt32BE(0)).toBe(bytes.length - 4);
      const { correlationId, body } = decodeResponse(fetch, version, bytes.subarray(4));
      expect(correlationId).toBe(7);
      const [topic] = body['responses'] as { partitions: { records: Buffer }[] }[];
      const decoded = decodeRecordBatches(topic!.partitions[0]!.records);
      expect(decoded.map((record) => record.baseOffset)).toEqual([0n, 10n, 20n]);
    },
  );

  it('copies chunks shorter than MIN_SPLICED_CHUNK_BYTES into the answer, where a buffer each costs more', () => {
    const small = [batch(0, 1, 10), batch(1, 1, 10)];
    expect(small.every((chunk) => chunk.length < MIN_SPLICED_CHUNK_BYTES)).toBe(true);
    const chunks = encodeResponseChunks(fetch, 11, 1, fetchAnswer(new SplicedBytes(small)));
    expect(chunks).toHaveLength(1);
    expect(chunks[0]).toEqual(encodeResponse(fetch, 11, 1, fetchAnswer(Buffer.concat(small))));
  });
});

describe('ByteWriter.splice', () => {
  it('counts spliced bytes in its positions and patches its own bytes on either side of them', () => {
    const spliced = Buffer.alloc(MIN_SPLICED_CHUNK_BYTES, 7);
    const writer = new ByteWriter(8);
    writer.int32(0).splice(spliced).int32(0);
    expect(writer.length).toBe(8 + spliced.length);
    writer.patchInt32(0, 11).patchInt32(4 + spliced.length, 22);
    const bytes = writer.finish();
    expect(new ByteReader(bytes).int32('before')).toBe(11);
    expect(bytes.subarray(4, 4 + spliced.length)).toEqual(spliced);
    expect(bytes.readInt32BE(4 + spliced.length)).toBe(22);
    // The writer's output keeps the spliced buffer itself.
    expect(writer.chunks()[1]).toBe(spliced);
  });

  it('keeps what it wrote before a splice when its buffer grows after it', () => {
    const writer = new ByteWriter(4);
    writer.int32(1).splice(Buffer.alloc(5000, 1));
    for (let index = 0; index < 100; index++) writer.int32(index);
    const bytes = writer.finish();
    expect(bytes.readInt32BE(0)).toBe(1);
    expect(bytes.readInt32BE(5004 + 99 * 4)).toBe(99);
    expect(bytes).toHaveLength(4 + 5000 + 400);
  });

  it('refuses to patch, view or cut into a spliced buffer (its bytes are the caller’s)', () => {
    const writer = new ByteWriter();
    writer.int32(1).splice(Buffer.alloc(5000)).int32(2);
    expect(() => writer.patchInt32(4, 1)).toThrow(/not the writer's own bytes/);
    expect(() => writer.view(0)).toThrow(/since the last splice/);
    expect(() => writer.truncate(2)).toThrow(/since the last splice/);
  });
});
