import { crc32c } from '@node-rs/crc32';
import fc from 'fast-check';
import { LedgerlineError } from '@ledgerline/errors';
import { decodeMessageEntry } from './decode.js';
import { encodeMessageEntry, messageCount } from './encode.js';
import { MAX_MESSAGES_PER_BATCH } from './limits.js';
import type { EntryInput } from './message.js';

const text = (s: string) => new TextEncoder().encode(s);

/** `[0x0e01][crc][size][metadata][payload]` assembled by hand, as a Pulsar broker lays it out. */
function pulsarFrame(metadata: number[], payload: number[]): Uint8Array {
  const rest = new Uint8Array(4 + metadata.length + payload.length);
  new DataView(rest.buffer).setUint32(0, metadata.length);
  rest.set(metadata, 4);
  rest.set(payload, 4 + metadata.length);
  const head = new Uint8Array(6);
  new DataView(head.buffer).setUint16(0, 0x0e01);
  new DataView(head.buffer).setUint32(2, crc32c(rest));
  return new Uint8Array([...head, ...rest]);
}

function refusal(run: () => unknown): LedgerlineError {
  try {
    run();
  } catch (error) {
    if (error instanceof LedgerlineError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('message-format', () => {
  // MessageMetadata{producer_name=1:"p", sequence_id=2:7, publish_time=3:1000, partition_key=6:"k"}
  const singleMetadata = [0x0a, 0x01, 0x70, 0x10, 0x07, 0x18, 0xe8, 0x07, 0x32, 0x01, 0x6b];

  it('writes a single message byte for byte as Pulsar does', () => {
    const encoded = encodeMessageEntry({
      producerName: 'p',
      sequenceId: 7n,
      publishTimeMs: 1000,
      key: 'k',
      payload: text('hi'),
    });
    expect(Buffer.from(encoded).toString('hex')).toBe(
      Buffer.from(pulsarFrame(singleMetadata, [0x68, 0x69])).toString('hex'),
    );
  });

  it('reads a hand-built Pulsar batch entry', () => {
    // MessageMetadata{producer_name:"p", sequence_id:7, publish_time:1000, num_messages_in_batch=11:2}
    const metadata = [0x0a, 0x01, 0x70, 0x10, 0x07, 0x18, 0xe8, 0x07, 0x58, 0x02];
    // SingleMessageMetadata{partition_key=2:"a", payload_size=3:1} then SingleMessageMetadata{payload_size:2, event_time=5:9}
    const first = [0x12, 0x01, 0x61, 0x18, 0x01];
    const second = [0x18, 0x02, 0x28, 0x09];
    const payload = [0, 0, 0, first.length, ...first, 0x41, 0, 0, 0, second.length, ...second, 0x42, 0x43];
    const decoded = decodeMessageEntry(pulsarFrame(metadata, payload));
    expect(decoded.header).toMatchObject({ producerName: 'p', numMessages: 2, batched: true, highestSequenceId: 8n });
    expect(
      decoded.messages.map((m) => [Buffer.from(m.payload).toString(), m.key, m.sequenceId, m.eventTimeMs]),
    ).toEqual([
      ['A', 'a', 7n, 0],
      ['BC', undefined, 8n, 9],
    ]);
    expect(decoded.messages.map((m) => m.batchIndex)).toEqual([0, 1]);
  });

  it('round-trips a batch with keys, properties and event times', () => {
    const input: EntryInput = {
      producerName: 'producer-1',
      sequenceId: 100n,
      publishTimeMs: 1_700_000_000_000,
      messages: [
        { payload: text('one'), key: 'k1', properties: { a: '1' }, eventTimeMs: 5 },
        { payload: new Uint8Array(0), properties: {} },
        { payload: text('three'), key: '', eventTimeMs: 7n },
      ],
    };
    const decoded = decodeMessageEntry(encodeMessageEntry(input));
    expect(messageCount(input)).toBe(3);
    expect(decoded.header.numMessages).toBe(3);
    expect(decoded.messages.map((m) => ({ ...m, payload: Buffer.from(m.payload).toString() }))).toEqual([
      {
        payload: 'one',
        key: 'k1',
        properties: { a: '1' },
        eventTimeMs: 5,
        publishTimeMs: 1_700_000_000_000,
        producerName: 'producer-1',
        sequenceId: 100n,
        batchIndex: 0,
      },
      {
        payload: '',
        key: undefined,
        properties: {},
        eventTimeMs: 0,
        publishTimeMs: 1_700_000_000_000,
        producerName: 'producer-1',
        sequenceId: 101n,
        batchIndex: 1,
      },
      {
        payload: 'three',
        key: '',
        properties: {},
        eventTimeMs: 7,
        publishTimeMs: 1_700_000_000_000,
        producerName: 'producer-1',
        sequenceId: 102n,
        batchIndex: 2,
      },
    ]);
  });

  it('round-trips keys and properties past the bounds the decoder used to have (64 KiB keys, 256 KiB per batched message)', () => {
    const key = 'k'.repeat(1024 * 1024);
    const properties = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`h${i}`, 'v'.repeat(60 * 1024)]));
    const batch = decodeMessageEntry(
      encodeMessageEntry({
        producerName: 'p',
        sequenceId: 0n,
        publishTimeMs: 1,
        messages: [{ payload: text('v'), key, properties }, { payload: text('w') }],
      }),
    );
    expect(batch.messages.map((message) => [message.key?.length, Object.keys(message.properties).length])).toEqual([
      [key.length, 20],
      [undefined, 0],
    ]);
    const single = decodeMessageEntry(
      encodeMessageEntry({ producerName: 'p', sequenceId: 0n, publishTimeMs: 1, payload: text('v'), key, properties }),
    );
    expect(single.messages[0]!.key).toBe(key);
    expect(Object.keys(single.messages[0]!.properties)).toHaveLength(20);
  });

  it('round-trips any single message', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 300 }),
        fc.option(fc.string(), { nil: undefined }),
        fc.dictionary(fc.string(), fc.string(), { maxKeys: 5 }),
        fc.bigInt({ min: 0n, max: 1n << 62n }),
        (payload, key, properties, sequenceId) => {
          const decoded = decodeMessageEntry(
            encodeMessageEntry({ producerName: 'p', sequenceId, publishTimeMs: 1, payload, key, properties }),
          );
          const [message] = decoded.messages;
          expect(Buffer.from(message!.payload).equals(Buffer.from(payload))).toBe(true);
          expect(message!.key).toBe(key);
          expect(message!.properties).toEqual(properties);
          expect(message!.sequenceId).toBe(sequenceId);
        },
      ),
    );
  });

  it('refuses damaged bytes with reasons', () => {
    const good = encodeMessageEntry({ producerName: 'p', sequenceId: 1n, publishTimeMs: 1, payload: text('x') });
    expect(refusal(() => decodeMessageEntry(good.subarray(0, 5))).reason).toBe('MESSAGE_TRUNCATED');
    const magic = Uint8Array.from(good);
    magic[0] = 0x0e;
    magic[1] = 0x02;
    expect(refusal(() => decodeMessageEntry(magic)).reason).toBe('MESSAGE_BAD_MAGIC');
    const flipped = Uint8Array.from(good);
    flipped[flipped.length - 1] = flipped[flipped.length - 1]! ^ 0xff;
    expect(refusal(() => decodeMessageEntry(flipped)).reason).toBe('MESSAGE_CHECKSUM_MISMATCH');
    const oversized = pulsarFrame([0x0a, 0x01], []);
    new DataView(oversized.buffer).setUint32(6, 100);
    new DataView(oversized.buffer).setUint32(2, crc32c(oversized.subarray(6)));
    expect(refusal(() => decodeMessageEntry(oversized)).reason).toBe('MESSAGE_TRUNCATED');
    const badBatch = pulsarFrame([0x58, 0x02], [0, 0, 0, 1, 0x18]);
    expect(refusal(() => decodeMessageEntry(badBatch)).code).toBe('INVALID_ARGUMENT');
  });

  it('decodes random bytes and random corruptions to a result or an INVALID_ARGUMENT, nothing else', () => {
    const sample = encodeMessageEntry({
      producerName: 'p',
      sequenceId: 1n,
      publishTimeMs: 1,
      messages: [{ payload: text('a'), key: 'k' }, { payload: text('bb') }],
    });
    const tryDecode = (bytes: Uint8Array) => {
      try {
        decodeMessageEntry(bytes);
      } catch (error) {
        expect(error).toBeInstanceOf(LedgerlineError);
        expect((error as LedgerlineError).code).toBe('INVALID_ARGUMENT');
      }
    };
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), tryDecode), { numRuns: 2000 });
    // Corruptions behind a recomputed checksum reach the metadata and batch parsers.
    fc.assert(
      fc.property(
        fc.nat(sample.length - 7),
        fc.integer({ min: 0, max: 255 }),
        fc.nat(sample.length),
        (at, value, cut) => {
          const bytes = Uint8Array.from(sample.subarray(0, Math.max(cut, 10)));
          if (6 + at < bytes.length) bytes[6 + at] = value;
          new DataView(bytes.buffer).setUint32(2, crc32c(bytes.subarray(6)));
          tryDecode(bytes);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('refuses malformed input to encode, naming the field', () => {
    const base = { producerName: 'p', sequenceId: 0n, publishTimeMs: 0 };
    expect(refusal(() => encodeMessageEntry({ ...base, sequenceId: -1n })).reason).toBe('INVALID_MESSAGE');
    expect(refusal(() => encodeMessageEntry({ ...base, payload: 'x' as never })).message).toMatch(/payload/);
    expect(refusal(() => encodeMessageEntry({ ...base, properties: { a: 1 as never } })).message).toMatch(/'a'/);
    expect(
      refusal(() =>
        encodeMessageEntry({
          ...base,
          sequenceId: (1n << 63n) - 1n,
          messages: [{ payload: text('a') }, { payload: text('b') }],
        }),
      ).message,
    ).toMatch(/sequence ids/);
    const tooMany = Array.from({ length: MAX_MESSAGES_PER_BATCH + 1 }, () => ({ payload: new Uint8Array(0) }));
    expect(refusal(() => encodeMessageEntry({ ...base, messages: tooMany })).message).toMatch(/at most/);
  });
});

describe('encodeMessageEntry into bytes the caller allocates', () => {
  const input: EntryInput = {
    producerName: 'p',
    sequenceId: 3n,
    publishTimeMs: 1_000,
    payload: Uint8Array.from([7, 8]),
  };

  it('writes into a view that does not start its buffer, and decodes as the default does', () => {
    let given: Uint8Array | undefined;
    const bytes = encodeMessageEntry(input, (size) => (given = new Uint8Array(size + 16).subarray(16)));
    expect(bytes).toBe(given);
    expect([...bytes]).toEqual([...encodeMessageEntry(input)]);
    expect(decodeMessageEntry(bytes).messages[0]?.payload).toEqual(Uint8Array.from([7, 8]));
  });

  it('refuses bytes of the wrong length', () => {
    expect(() => encodeMessageEntry(input, (size) => new Uint8Array(size + 1))).toThrow(LedgerlineError);
  });
});
