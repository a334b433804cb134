import fc from 'fast-check';
import {
  API_SPECS,
  Compression,
  decodeRecordBatches,
  decodeRequest,
  encodeRecordBatch,
  encodeRequest,
  FrameDecoder,
  isProtocolError,
  type Message,
} from './index.js';

/**
 * The decoders meet bytes from anyone on the network: whatever they are given,
 * they return a value or fail with one of the codec's protocol errors, never a
 * RangeError, a TypeError or a hang.
 */
function onlyProtocolErrors(decode: () => unknown): void {
  try {
    decode();
  } catch (error) {
    if (!isProtocolError(error)) throw error;
  }
}

/** A valid request of every API and version, with empty arrays: the seeds that mutations start from. */
const validFrames: Buffer[] = API_SPECS.flatMap((api) =>
  Array.from({ length: api.maxVersion - api.minVersion + 1 }, (_, index) => {
    const version = api.minVersion + index;
    const body: Message = {};
    return encodeRequest(
      api,
      { apiKey: api.key, apiVersion: version, correlationId: 1, clientId: 'fuzz' },
      body,
    ).subarray(4);
  }),
);

/**
 * Metadata of the flexible versions with topics in them (by name and, from
 * v10, by id with a null name), so mutations reach compact arrays, nullable
 * compact strings, uuids and tagged fields.
 */
const metadataFrames: Buffer[] = [9, 10, 11, 12].map((version) => {
  const api = API_SPECS.find((candidate) => candidate.name === 'Metadata')!;
  const topics =
    version < 10
      ? [{ name: 'orders' }]
      : [
          { topicId: Buffer.alloc(16), name: 'orders' },
          { topicId: Buffer.alloc(16, 9), name: null },
        ];
  return encodeRequest(
    api,
    { apiKey: api.key, apiVersion: version, correlationId: 1, clientId: 'fuzz' },
    { topics, allowAutoTopicCreation: true, includeTopicAuthorizedOperations: true },
  ).subarray(4);
});
validFrames.push(...metadataFrames);

const validBatch = encodeRecordBatch({
  baseOffset: 0n,
  partitionLeaderEpoch: 0,
  compression: Compression.NONE,
  timestampType: 0,
  transactional: false,
  control: false,
  lastOffsetDelta: 1,
  baseTimestamp: 1n,
  maxTimestamp: 2n,
  producerId: -1n,
  producerEpoch: -1,
  baseSequence: -1,
  records: [
    {
      offsetDelta: 0,
      timestampDelta: 0n,
      key: Buffer.from('k'),
      value: Buffer.from('v'),
      headers: [{ key: 'a', value: null }],
    },
    { offsetDelta: 1, timestampDelta: 1n, key: null, value: null, headers: [] },
  ],
});

const mutation = fc.record({ index: fc.nat(), byte: fc.integer({ min: 0, max: 255 }), cut: fc.nat() });

describe('fuzzed decoders fail only with protocol errors', () => {
  it('random bytes as a request frame', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) =>
        onlyProtocolErrors(() => decodeRequest(Buffer.from(bytes))),
      ),
      { numRuns: 5000 },
    );
  });

  it('random bytes behind a valid API key and version', () => {
    fc.assert(
      fc.property(fc.constantFrom(...validFrames), fc.uint8Array({ maxLength: 120 }), (seed, tail) =>
        onlyProtocolErrors(() => decodeRequest(Buffer.concat([seed.subarray(0, 4), Buffer.from(tail)]))),
      ),
      { numRuns: 5000 },
    );
  });

  it('truncated and byte-mutated valid requests of every API and version', () => {
    fc.assert(
      fc.property(fc.constantFrom(...validFrames), fc.array(mutation, { maxLength: 4 }), (seed, mutations) => {
        let bytes = Buffer.from(seed);
        for (const { index, byte, cut } of mutations) {
          if (bytes.length === 0) break;
          bytes[index % bytes.length] = byte;
          if (cut % 3 === 0) bytes = bytes.subarray(0, cut % (bytes.length + 1));
        }
        onlyProtocolErrors(() => decodeRequest(bytes));
      }),
      { numRuns: 5000 },
    );
  });

  it('truncated and mutated record batches (the CRC is recomputed half the time, so the record parser is reached)', () => {
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 4 }), fc.boolean(), (mutations, fixCrc) => {
        let bytes = Buffer.from(validBatch);
        for (const { index, byte, cut } of mutations) {
          bytes[index % bytes.length] = byte;
          if (cut % 5 === 0) bytes = bytes.subarray(0, Math.max(1, cut % (bytes.length + 1)));
        }
        if (fixCrc && bytes.length > 21) {
          // eslint-disable-next-line @typescript-eslint/no-require-imports
          const { crc32c } = require('@node-rs/crc32') as { crc32c: (data: Buffer) => number };
          bytes.writeUInt32BE(crc32c(bytes.subarray(21)), 17);
        }
        onlyProtocolErrors(() => decodeRecordBatches(bytes));
      }),
      { numRuns: 5000 },
    );
  });

  it('a frame decoder fed random chunks holds at most one bounded frame', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 20 }), (chunks) => {
        const decoder = new FrameDecoder(1024);
        try {
          for (const chunk of chunks) {
            decoder.push(Buffer.from(chunk));
            expect(decoder.pendingBytes).toBeLessThanOrEqual(1024 + 4 + 64);
          }
        } catch (error) {
          if (!isProtocolError(error)) throw error;
        }
      }),
      { numRuns: 3000 },
    );
  });
});
