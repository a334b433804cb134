import fc from 'fast-check';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { BrokerEntryMetadataSchema } from '@ledgerline/proto';
import { LedgerlineError } from '@ledgerline/errors';
import { allocateWithEntryHeadroom, decodeEntry, encodeEntry, ENTRY_HEADROOM_BYTES } from './entry-framing.js';
import { MAX_BROKER_ENTRY_METADATA_BYTES, MAX_OFFSET } from './limits.js';

const bytes = (...values: number[]) => Uint8Array.from(values);

function thrown(action: () => unknown): LedgerlineError {
  try {
    action();
  } catch (error) {
    if (error instanceof LedgerlineError) return error;
    throw error;
  }
  throw new Error('expected a LedgerlineError');
}

describe('the largest event time of an entry (BrokerEntryMetadata field 100)', () => {
  it('is written as field 100 after the index, and read back', () => {
    // field 100 varint: tag 800 = varint a0 06; 1_600_000_000_000 = varint 80 80 ba bb c8 2e
    const metadata = [0x08, 0x07, 0x10, 0x05, 0xa0, 0x06, 0x80, 0x80, 0xba, 0xbb, 0xc8, 0x2e];
    const entry = bytes(0x0e, 0x02, 0, 0, 0, metadata.length, ...metadata, 0x42);
    expect(encodeEntry({ brokerTimestamp: 7, index: 5, maxEventTimeMs: 1_600_000_000_000 }, bytes(0x42))).toEqual(
      entry,
    );
    expect(decodeEntry(entry).metadata).toEqual({ brokerTimestamp: 7, index: 5, maxEventTimeMs: 1_600_000_000_000 });
  });

  it('is absent from an entry framed without it, which decodes as entries written before it did', () => {
    const entry = encodeEntry({ brokerTimestamp: 7, index: 5 }, bytes(0x42));
    expect(entry).toEqual(bytes(0x0e, 0x02, 0, 0, 0, 4, 0x08, 0x07, 0x10, 0x05, 0x42));
    expect(decodeEntry(entry).metadata).toEqual({ brokerTimestamp: 7, index: 5 });
  });

  it('matches the BrokerEntryMetadata of the contract', () => {
    const framed = encodeEntry({ brokerTimestamp: 9, index: 3, maxEventTimeMs: 1234 }, bytes());
    const decoded = fromBinary(BrokerEntryMetadataSchema, framed.subarray(6));
    expect([decoded.brokerTimestamp, decoded.index, decoded.maxEventTimeMs]).toEqual([9n, 3n, 1234n]);
  });

  it('refuses a negative or fractional one, and one with the wrong wire type', () => {
    for (const maxEventTimeMs of [-1, 1.5, MAX_OFFSET + 1]) {
      expect(thrown(() => encodeEntry({ brokerTimestamp: 1, index: 1, maxEventTimeMs }, bytes())).reason).toBe(
        'INVALID_BROKER_ENTRY_METADATA',
      );
    }
    // field 100 with wire type 2 (length-delimited)
    const entry = bytes(0x0e, 0x02, 0, 0, 0, 4, 0xa2, 0x06, 1, 0x07);
    expect(thrown(() => decodeEntry(entry)).reason).toBe('MALFORMED_BROKER_ENTRY_METADATA');
  });
});

describe('decodeEntry on bytes laid out by hand as Pulsar writes them', () => {
  it('reads broker_timestamp and index, and leaves the payload untouched', () => {
    // 0x0e02 | size 5 | field 1 varint 300 (0xac 0x02) | field 2 varint 5 | payload 0x0e 0x01 0xff
    const entry = bytes(0x0e, 0x02, 0, 0, 0, 5, 0x08, 0xac, 0x02, 0x10, 0x05, 0x0e, 0x01, 0xff);
    expect(decodeEntry(entry)).toEqual({
      metadata: { brokerTimestamp: 300, index: 5 },
      payload: bytes(0x0e, 0x01, 0xff),
    });
    expect(encodeEntry({ brokerTimestamp: 300, index: 5 }, bytes(0x0e, 0x01, 0xff))).toEqual(entry);
  });

  it('reads a millisecond timestamp and a large index', () => {
    // 1_700_000_000_000 = 0x18bcfe56800 -> varint 80 d0 95 ff bc 31; 2^40 = varint 80 80 80 80 80 20
    const metadata = [0x08, 0x80, 0xd0, 0x95, 0xff, 0xbc, 0x31, 0x10, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20];
    const entry = bytes(0x0e, 0x02, 0, 0, 0, metadata.length, ...metadata, 0x42);
    expect(decodeEntry(entry).metadata).toEqual({ brokerTimestamp: 1_700_000_000_000, index: 2 ** 40 });
    expect(encodeEntry({ brokerTimestamp: 1_700_000_000_000, index: 2 ** 40 }, bytes(0x42))).toEqual(entry);
  });

  it('reads metadata with only a timestamp (Pulsar without the index interceptor), or empty metadata', () => {
    expect(decodeEntry(bytes(0x0e, 0x02, 0, 0, 0, 2, 0x08, 0x07, 0x99)).metadata).toEqual({ brokerTimestamp: 7 });
    expect(decodeEntry(bytes(0x0e, 0x02, 0, 0, 0, 0))).toEqual({ metadata: {}, payload: bytes() });
  });

  it('skips fields it does not know, and keeps the last value of a repeated field', () => {
    // field 3 length-delimited "ab", field 4 fixed64, field 5 fixed32, field 6 varint, then index twice
    const metadata = [
      0x1a, 2, 0x61, 0x62, 0x21, 1, 2, 3, 4, 5, 6, 7, 8, 0x2d, 1, 2, 3, 4, 0x30, 0x96, 0x01, 0x10, 1, 0x10, 9,
    ];
    const entry = bytes(0x0e, 0x02, 0, 0, 0, metadata.length, ...metadata);
    expect(decodeEntry(entry).metadata).toEqual({ index: 9 });
  });

  it('returns an entry without the magic whole, with no metadata', () => {
    const plain = bytes(0x0e, 0x01, 1, 2, 3);
    expect(decodeEntry(plain)).toEqual({ metadata: undefined, payload: plain });
    expect(decodeEntry(bytes())).toEqual({ metadata: undefined, payload: bytes() });
    expect(decodeEntry(bytes(0x0e))).toEqual({ metadata: undefined, payload: bytes(0x0e) });
  });
});

describe('decodeEntry refuses broken headers with INVALID_ARGUMENT and a reason', () => {
  it.each([
    ['magic only', bytes(0x0e, 0x02), 'ENTRY_HEADER_TRUNCATED'],
    ['size cut short', bytes(0x0e, 0x02, 0, 0, 0), 'ENTRY_HEADER_TRUNCATED'],
    ['size beyond the bytes', bytes(0x0e, 0x02, 0, 0, 0, 4, 0x08, 0x01), 'ENTRY_HEADER_TRUNCATED'],
    ['size beyond the limit', bytes(0x0e, 0x02, 0, 0, 1, 1, 0x08, 0x01), 'BROKER_ENTRY_METADATA_TOO_LARGE'],
    ['negative size', bytes(0x0e, 0x02, 0xff, 0xff, 0xff, 0xff), 'BROKER_ENTRY_METADATA_TOO_LARGE'],
    ['varint cut short', bytes(0x0e, 0x02, 0, 0, 0, 2, 0x08, 0x80), 'MALFORMED_BROKER_ENTRY_METADATA'],
    ['index as a string', bytes(0x0e, 0x02, 0, 0, 0, 3, 0x12, 1, 0x61), 'MALFORMED_BROKER_ENTRY_METADATA'],
    ['field number 0', bytes(0x0e, 0x02, 0, 0, 0, 2, 0x00, 0x01), 'MALFORMED_BROKER_ENTRY_METADATA'],
    ['a group', bytes(0x0e, 0x02, 0, 0, 0, 2, 0x1b, 0x1c), 'MALFORMED_BROKER_ENTRY_METADATA'],
    ['unknown field too long', bytes(0x0e, 0x02, 0, 0, 0, 3, 0x1a, 5, 0x61), 'MALFORMED_BROKER_ENTRY_METADATA'],
    [
      'index above 2^53 - 1',
      bytes(0x0e, 0x02, 0, 0, 0, 9, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f),
      'BROKER_ENTRY_METADATA_VALUE_TOO_LARGE',
    ],
  ])('%s', (_name, entry, reason) => {
    const error = thrown(() => decodeEntry(entry));
    expect([error.code, error.reason]).toEqual(['INVALID_ARGUMENT', reason]);
  });

  it('accepts metadata of exactly the documented maximum size', () => {
    const filler = new Array<number>(MAX_BROKER_ENTRY_METADATA_BYTES - 3).fill(0x61);
    const metadata = [0x1a, 0xfd, 0x01, ...filler];
    expect(metadata.length).toBe(MAX_BROKER_ENTRY_METADATA_BYTES);
    expect(decodeEntry(bytes(0x0e, 0x02, 0, 0, 1, 0, ...metadata)).metadata).toEqual({});
  });

  it('refuses to encode values that are not offsets or times', () => {
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 53]) {
      expect(thrown(() => encodeEntry({ brokerTimestamp: 1, index: bad }, bytes())).reason).toBe(
        'INVALID_BROKER_ENTRY_METADATA',
      );
    }
    expect(thrown(() => decodeEntry('x' as unknown as Uint8Array)).reason).toBe('INVALID_ENTRY_BYTES');
  });
});

describe('entry framing properties', () => {
  const safe = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });

  it('round-trips, and writes exactly the bytes protobuf-es writes for BrokerEntryMetadata', () => {
    fc.assert(
      fc.property(safe, safe, fc.uint8Array({ maxLength: 64 }), (brokerTimestamp, index, payload) => {
        const entry = encodeEntry({ brokerTimestamp, index }, payload);
        expect(decodeEntry(entry)).toEqual({ metadata: { brokerTimestamp, index }, payload });
        const reference = toBinary(
          BrokerEntryMetadataSchema,
          create(BrokerEntryMetadataSchema, { brokerTimestamp: BigInt(brokerTimestamp), index: BigInt(index) }),
        );
        const size = new DataView(entry.buffer).getUint32(2);
        expect(entry.subarray(6, 6 + size)).toEqual(reference);
      }),
      { numRuns: 300 },
    );
  });

  it('decodes any metadata protobuf-es accepts to the same values', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (metadata) => {
        let reference: { brokerTimestamp: bigint; index: bigint } | undefined;
        try {
          reference = fromBinary(BrokerEntryMetadataSchema, metadata);
        } catch {
          reference = undefined;
        }
        const entry = bytes(0x0e, 0x02, 0, 0, 0, metadata.length, ...metadata);
        let ours: ReturnType<typeof decodeEntry>['metadata'];
        try {
          ours = decodeEntry(entry).metadata;
        } catch (error) {
          expect(error).toBeInstanceOf(LedgerlineError);
          return;
        }
        // What we accept, protobuf-es accepts, with the same values.
        expect(reference).toBeDefined();
        if (ours?.brokerTimestamp !== undefined) expect(BigInt(ours.brokerTimestamp)).toBe(reference?.brokerTimestamp);
        if (ours?.index !== undefined) expect(BigInt(ours.index)).toBe(reference?.index);
      }),
      { numRuns: 500 },
    );
  });

  it('never throws anything but a LedgerlineError on arbitrary bytes', () => {
    const withMagic = fc.uint8Array({ maxLength: 80 }).map((tail) => bytes(0x0e, 0x02, ...tail));
    const withSmallSize = fc
      .tuple(fc.integer({ min: 0, max: 40 }), fc.uint8Array({ maxLength: 40 }))
      .map(([size, tail]) => bytes(0x0e, 0x02, 0, 0, 0, size, ...tail));
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 80 }), withMagic, withSmallSize), (entry) => {
        try {
          const decoded = decodeEntry(entry);
          expect(decoded.payload.length).toBeLessThanOrEqual(entry.length);
        } catch (error) {
          expect(error).toBeInstanceOf(LedgerlineError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('encodeEntry over a payload with headroom', () => {
  const payloadOf = (bytes: number[]): Uint8Array => {
    const payload = allocateWithEntryHeadroom(bytes.length);
    payload.set(bytes);
    return payload;
  };

  it('writes the header in front of the payload, sharing its memory, and decodes as a copied entry does', () => {
    const payload = payloadOf([1, 2, 3]);
    const metadata = { brokerTimestamp: MAX_OFFSET, index: MAX_OFFSET };
    const framed = encodeEntry(metadata, payload);
    expect(framed.buffer).toBe(payload.buffer);
    expect(framed.byteOffset + framed.length).toBe(payload.byteOffset + payload.length);
    expect([...framed]).toEqual([...encodeEntry(metadata, Uint8Array.from([1, 2, 3]))]);
    expect(decodeEntry(framed)).toEqual({ metadata, payload: Uint8Array.from([1, 2, 3]) });
  });

  it('frames in place only once: a second framing copies, and the first stays as it was', () => {
    const payload = payloadOf([9, 9]);
    const first = encodeEntry({ brokerTimestamp: 1, index: 0 }, payload);
    const before = [...first];
    const second = encodeEntry({ brokerTimestamp: 2_000_000, index: 5_000_000 }, payload);
    expect(second.buffer).not.toBe(payload.buffer);
    expect([...first]).toEqual(before);
    expect(decodeEntry(second).metadata).toEqual({ brokerTimestamp: 2_000_000, index: 5_000_000 });
  });

  it('leaves room for the widest header', () => {
    expect(ENTRY_HEADROOM_BYTES).toBe(
      encodeEntry({ brokerTimestamp: MAX_OFFSET, index: MAX_OFFSET, maxEventTimeMs: MAX_OFFSET }, new Uint8Array(0))
        .length,
    );
  });

  it('frames an entry with its largest event time in place', () => {
    const payload = payloadOf([1, 2, 3]);
    const framed = encodeEntry({ brokerTimestamp: MAX_OFFSET, index: MAX_OFFSET, maxEventTimeMs: MAX_OFFSET }, payload);
    expect(framed.buffer).toBe(payload.buffer);
    expect(decodeEntry(framed)).toEqual({
      metadata: { brokerTimestamp: MAX_OFFSET, index: MAX_OFFSET, maxEventTimeMs: MAX_OFFSET },
      payload: bytes(1, 2, 3),
    });
  });
});
