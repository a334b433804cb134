import { checkEntryPosition, checkPosition } from './checked-position.js';
import { DATA_PATH_LIMITS, checkWithinLimit } from './data-path-limits.js';
import { CursorCodecReason } from './errors.js';

const invalidPosition = expect.objectContaining({
  code: 'INVALID_ARGUMENT',
  reason: CursorCodecReason.INVALID_POSITION,
});

describe('checkPosition and checkEntryPosition', () => {
  it('take ids as numbers or int64 bigints and hand back plain numbers', () => {
    expect(checkPosition({ ledgerId: 3n, entryId: -1n })).toEqual({ ledgerId: 3, entryId: -1 });
    expect(checkEntryPosition({ ledgerId: 3, entryId: 0 })).toEqual({ ledgerId: 3, entryId: 0 });
    const max = BigInt(Number.MAX_SAFE_INTEGER);
    expect(checkEntryPosition({ ledgerId: max, entryId: max })).toEqual({
      ledgerId: Number.MAX_SAFE_INTEGER,
      entryId: Number.MAX_SAFE_INTEGER,
    });
  });

  it('allow entry -1 (before a ledger’s first entry) for a position, never for one that names an entry', () => {
    expect(checkPosition({ ledgerId: 1, entryId: -1 })).toEqual({ ledgerId: 1, entryId: -1 });
    expect(() => checkEntryPosition({ ledgerId: 1, entryId: -1 }, 'ack')).toThrow(invalidPosition);
    expect(() => checkEntryPosition({ ledgerId: 1n, entryId: -1n }, 'ack')).toThrow(/ack\.entryId must name an entry/);
  });

  it.each([
    ['missing', undefined],
    ['null', null],
    ['a negative ledger', { ledgerId: -1, entryId: 0 }],
    ['an entry below -1', { ledgerId: 1, entryId: -2 }],
    ['an id past 2^53-1', { ledgerId: 2n ** 53n, entryId: 0n }],
    ['a fraction', { ledgerId: 1, entryId: 0.5 }],
    ['a string', { ledgerId: '1', entryId: 0 }],
  ])('refuse %s with INVALID_POSITION', (_what, p) => {
    expect(() => checkPosition(p)).toThrow(invalidPosition);
    expect(() => checkEntryPosition(p)).toThrow(invalidPosition);
  });
});

describe('checkWithinLimit', () => {
  it('takes a count up to the limit and refuses one past it, naming the limit and what was sent', () => {
    const max = DATA_PATH_LIMITS.maxAckPositionsPerCall;
    expect(() => checkWithinLimit('maxAckPositionsPerCall', max, 'ack positions')).not.toThrow();
    expect(() => checkWithinLimit('maxAckPositionsPerCall', max + 1, 'ack positions')).toThrow(
      expect.objectContaining({
        code: 'INVALID_ARGUMENT',
        reason: CursorCodecReason.LIMIT_EXCEEDED,
        message: `ack positions carries ${max + 1}; maxAckPositionsPerCall is ${max}`,
        details: { limit: 'maxAckPositionsPerCall', max: String(max), sent: String(max + 1) },
      }),
    );
  });
});
