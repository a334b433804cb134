import { checkEntryAcks } from './checked-acks.js';
import { checkEntryRange } from './checked-position.js';
import { DATA_PATH_LIMITS } from './data-path-limits.js';
import { CursorCodecReason } from './errors.js';

const invalidPosition = expect.objectContaining({
  code: 'INVALID_ARGUMENT',
  reason: CursorCodecReason.INVALID_POSITION,
});
const max = DATA_PATH_LIMITS.maxAckPositionsPerCall;

describe('checkEntryRange', () => {
  it('takes a range of one ledger with ids as numbers or int64 bigints', () => {
    expect(checkEntryRange({ ledgerId: 3n, firstEntryId: 0n, lastEntryId: 9n })).toEqual({
      ledgerId: 3,
      firstEntryId: 0,
      lastEntryId: 9,
    });
    expect(checkEntryRange({ ledgerId: 3, firstEntryId: 4, lastEntryId: 4 })).toEqual({
      ledgerId: 3,
      firstEntryId: 4,
      lastEntryId: 4,
    });
  });

  it.each([
    ['missing', undefined],
    ['backwards', { ledgerId: 1, firstEntryId: 5, lastEntryId: 4 }],
    ['starting before the first entry', { ledgerId: 1, firstEntryId: -1, lastEntryId: 4 }],
    ['without a ledger', { firstEntryId: 0, lastEntryId: 4 }],
    ['without a last entry', { ledgerId: 1, firstEntryId: 0 }],
    ['past 2^53-1', { ledgerId: 1n, firstEntryId: 0n, lastEntryId: 2n ** 53n }],
  ])('refuses a range %s with INVALID_POSITION', (_what, range) => {
    expect(() => checkEntryRange(range, 'ack range')).toThrow(invalidPosition);
  });

  it('says which way a backwards range runs', () => {
    expect(() => checkEntryRange({ ledgerId: 1, firstEntryId: 5, lastEntryId: 4 }, 'ack range')).toThrow(
      'ack range runs backwards: firstEntryId 5 is after lastEntryId 4',
    );
  });
});

describe('checkEntryAcks', () => {
  const limitExceeded = (sent: number) =>
    expect.objectContaining({
      code: 'INVALID_ARGUMENT',
      reason: CursorCodecReason.LIMIT_EXCEEDED,
      details: { limit: 'maxAckPositionsPerCall', max: String(max), sent: String(sent) },
    });

  it('counts a range as the entries it names: the limit is on entries, not on what the wire carries', () => {
    const atLimit = [{ ledgerId: 1, firstEntryId: 0, lastEntryId: max - 2 }];
    expect(checkEntryAcks([{ ledgerId: 2, entryId: 0 }], atLimit, 'ack').ranges).toHaveLength(1);
    expect(() =>
      checkEntryAcks(
        [
          { ledgerId: 2, entryId: 0 },
          { ledgerId: 2, entryId: 1 },
        ],
        atLimit,
        'ack',
      ),
    ).toThrow(limitExceeded(max + 1));
    const million = [{ ledgerId: 1n, firstEntryId: 0n, lastEntryId: 999_999n }];
    expect(() => checkEntryAcks([], million, 'ack')).toThrow(limitExceeded(1_000_000));
  });

  it('refuses a flood of ranges by their count before it looks at any of them', () => {
    const flood = Array.from({ length: max + 1 }, () => 'not a range');
    expect(() => checkEntryAcks([], flood, 'ack')).toThrow(limitExceeded(max + 1));
  });

  it('checks every position and range before handing any back', () => {
    const ranges = [
      { ledgerId: 1, firstEntryId: 0, lastEntryId: 3 },
      { ledgerId: 1, firstEntryId: 7, lastEntryId: 6 },
    ];
    expect(() => checkEntryAcks([{ ledgerId: 1, entryId: 5 }], ranges, 'ack')).toThrow(invalidPosition);
    expect(() => checkEntryAcks([{ ledgerId: 1, entryId: -1 }], ranges.slice(0, 1), 'ack')).toThrow(invalidPosition);
  });
});
