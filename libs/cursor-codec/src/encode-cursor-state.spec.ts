import fc from 'fast-check';
import { LedgerlineError } from '@ledgerline/errors';
import { AckSet } from './ack-set.js';
import { createCursorState } from './cursor-state.js';
import { decodeCursorState, detectCursorStateFormat } from './decode-cursor-state.js';
import { CURSOR_STATE_FORMATS, encodeCursorState, type CursorStateFormat } from './encode-cursor-state.js';
import { cursorStateArbitrary, stateView } from './testing/state-arbitraries.js';

const isPulsar = (format: CursorStateFormat): boolean => format !== 'compact';

describe('encodeCursorState / decodeCursorState round trip', () => {
  it.each(CURSOR_STATE_FORMATS)('%s keeps everything the format can hold', (format) => {
    fc.assert(
      fc.property(cursorStateArbitrary({ cursorProperties: true }), (state) => {
        const encoded = encodeCursorState(state, { format });
        expect(encoded.format).toBe(format);
        expect(detectCursorStateFormat(encoded.bytes)).toBe(
          format === 'long-array' && state.acked.isEmpty() ? 'pulsar-ranges' : format,
        );
        const decoded = decodeCursorState(encoded.bytes);
        expect(stateView(decoded, isPulsar(format))).toEqual(stateView(state, isPulsar(format)));
        expect(encoded.cursorPropertiesOmitted).toBe(isPulsar(format) ? state.cursorProperties.size : 0);
        expect(encoded.rangesDropped).toBe(0);
        expect(encoded.rangesPersisted).toBe(state.acked.rangeCount());
      }),
      { numRuns: 60 },
    );
  });

  it.each(CURSOR_STATE_FORMATS)('%s round-trips regions dense enough to be bitmaps', (format) => {
    fc.assert(
      fc.property(cursorStateArbitrary({ cursorProperties: false, dense: true }), (state) => {
        const decoded = decodeCursorState(encodeCursorState(state, { format }).bytes);
        expect(decoded.acked.equals(state.acked)).toBe(true);
      }),
      { numRuns: 8 },
    );
  });

  it('compact round-trips with compression forced on and off', () => {
    fc.assert(
      fc.property(
        cursorStateArbitrary({ cursorProperties: true }),
        fc.constantFrom('none', 'deflate'),
        (state, compression) => {
          const encoded = encodeCursorState(state, { format: 'compact', compactCompression: compression });
          expect(encoded.bytes[2]).toBe(compression === 'deflate' ? 1 : 0);
          expect(stateView(decodeCursorState(encoded.bytes), false)).toEqual(stateView(state, false));
        },
      ),
      { numRuns: 30 },
    );
  });
});

describe('auto format', () => {
  it('is never larger than any single format that keeps as much', () => {
    fc.assert(
      fc.property(cursorStateArbitrary({ cursorProperties: false }), (state) => {
        const auto = encodeCursorState(state);
        for (const format of CURSOR_STATE_FORMATS) {
          expect(auto.bytes.length).toBeLessThanOrEqual(encodeCursorState(state, { format }).bytes.length);
        }
        expect(stateView(decodeCursorState(auto.bytes), isPulsar(auto.format))).toEqual(
          stateView(state, isPulsar(auto.format)),
        );
      }),
      { numRuns: 60 },
    );
  });

  it('keeps cursorProperties by choosing compact when there are any', () => {
    const state = createCursorState({ cursorProperties: new Map([['owner', 'reader-1']]) });
    const auto = encodeCursorState(state);
    expect(auto.format).toBe('compact');
    expect(auto.complete).toBe(true);
    expect(decodeCursorState(auto.bytes).cursorProperties.get('owner')).toBe('reader-1');
  });

  it('prefers a Pulsar format for a tiny state where it is smaller', () => {
    const auto = encodeCursorState(createCursorState({ markDelete: { ledgerId: 3, entryId: 9 } }));
    expect(auto.format).toBe('pulsar-ranges');
    expect(decodeCursorState(auto.bytes).markDelete).toEqual({ ledgerId: 3, entryId: 9 });
  });

  it('skips long-array for entry ids Pulsar cannot index', () => {
    const acked = new AckSet();
    acked.add(1, 2 ** 31);
    const state = createCursorState({ acked });
    expect(encodeCursorState(state).format).not.toBe('long-array');
    expect(() => encodeCursorState(state, { format: 'long-array' })).toThrow(
      expect.objectContaining({ reason: 'FORMAT_NOT_APPLICABLE', code: 'INVALID_ARGUMENT' }),
    );
  });
});

describe('persistence limits are reported, never silent', () => {
  const acked = new AckSet();
  for (let entry = 0; entry < 100; entry += 2) acked.add(5, entry);
  acked.add(6, 0);
  const batchAcks = new Map([
    ['5:1', { batchSize: 4, ackedIndexes: [0] }],
    ['5:3', { batchSize: 4, ackedIndexes: [1, 2] }],
  ]);
  const state = createCursorState({ acked, batchAcks, markDelete: { ledgerId: 4, entryId: -1 } });

  it.each(CURSOR_STATE_FORMATS)('%s keeps the first N ranges and counts the rest', (format) => {
    const encoded = encodeCursorState(state, { format, maxRangesToPersist: 10, maxBatchAcksToPersist: 1 });
    expect(encoded.rangesPersisted).toBe(10);
    expect(encoded.rangesDropped).toBe(41);
    expect(encoded.batchAcksDropped).toBe(1);
    expect(encoded.complete).toBe(false);
    const decoded = decodeCursorState(encoded.bytes);
    expect([...decoded.acked.ranges()]).toEqual([...acked.ranges()].slice(0, 10));
    expect([...decoded.batchAcks.keys()]).toEqual(['5:1']);
    expect(acked.rangeCount()).toBe(51);
  });

  it('persists no ranges at all with a limit of 0', () => {
    const encoded = encodeCursorState(state, { maxRangesToPersist: 0 });
    expect(encoded.rangesDropped).toBe(51);
    expect(decodeCursorState(encoded.bytes).acked.isEmpty()).toBe(true);
  });

  it('refuses an encoding over maxEncodedBytes with SNAPSHOT_TOO_LARGE', () => {
    expect(() => encodeCursorState(state, { format: 'pulsar-ranges', maxEncodedBytes: 100 })).toThrow(
      expect.objectContaining({ reason: 'SNAPSHOT_TOO_LARGE', code: 'RESOURCE_EXHAUSTED' }),
    );
  });
});

describe('invalid states and options', () => {
  const cases: [string, () => unknown][] = [
    [
      'a mark-delete entry below -1',
      () => encodeCursorState(createCursorState({ markDelete: { ledgerId: 1, entryId: -2 } })),
    ],
    [
      'a fractional mark-delete',
      () => encodeCursorState(createCursorState({ markDelete: { ledgerId: 1.5, entryId: 0 } })),
    ],
    [
      'a bad batch key',
      () => encodeCursorState(createCursorState({ batchAcks: new Map([['x', { batchSize: 2, ackedIndexes: [] }]]) })),
    ],
    [
      'a fully acked batch',
      () =>
        encodeCursorState(createCursorState({ batchAcks: new Map([['1:1', { batchSize: 1, ackedIndexes: [0] }]]) })),
    ],
    [
      'unsorted batch indexes',
      () =>
        encodeCursorState(createCursorState({ batchAcks: new Map([['1:1', { batchSize: 5, ackedIndexes: [2, 1] }]]) })),
    ],
    [
      'a property beyond int64',
      () => encodeCursorState(createCursorState({ properties: new Map([['p', 2n ** 63n]]) })),
    ],
    ['an unknown format', () => encodeCursorState(createCursorState(), { format: 'json' as never })],
    ['a negative range limit', () => encodeCursorState(createCursorState(), { maxRangesToPersist: -1 })],
  ];
  it.each(cases)('rejects %s with INVALID_ARGUMENT', (_name, call) => {
    expect(call).toThrow(LedgerlineError);
    try {
      call();
    } catch (error) {
      expect((error as LedgerlineError).code).toBe('INVALID_ARGUMENT');
    }
  });
});

describe('the encoded result', () => {
  it('is the bytes themselves, decodable as they are, and carries the report', () => {
    const acked = new AckSet();
    for (let entry = 0; entry < 200; entry += 2) acked.add(7, entry);
    const state = createCursorState({ markDelete: { ledgerId: 7, entryId: -1 }, acked });
    const encoded = encodeCursorState(state, { format: 'compact', maxRangesToPersist: 60 });
    expect(encoded).toBeInstanceOf(Uint8Array);
    expect(encoded.bytes).toBe(encoded);
    expect(encoded.rangesDropped).toBe(40);
    expect(encoded.report()).toEqual({
      format: 'compact',
      rangesPersisted: 60,
      rangesDropped: 40,
      batchAcksDropped: 0,
      cursorPropertiesOmitted: 0,
      complete: false,
    });
    expect(decodeCursorState(encoded).acked.rangeCount()).toBe(60);
    // A slice is plain bytes: the report describes the whole encoding only.
    expect(encoded.slice(1).constructor).toBe(Uint8Array);
    expect(Buffer.from(encoded).equals(Buffer.from(encoded.buffer, encoded.byteOffset, encoded.byteLength))).toBe(true);
  });
});
