import { ackForStream, coalescePositions } from './ack-ranges.js';

const at = (ledgerId: number, entryId: number) => ({ ledgerId: BigInt(ledgerId), entryId: BigInt(entryId) });
const range = (ledgerId: number, first: number, last: number) => ({
  ledgerId: BigInt(ledgerId),
  firstEntryId: BigInt(first),
  lastEntryId: BigInt(last),
});

describe('coalescePositions', () => {
  it('makes runs of consecutive entries of one ledger ranges, in order, and keeps lone entries as positions', () => {
    const acked = [at(2, 0), at(1, 5), at(1, 3), at(1, 4), at(1, 9), at(2, 1), at(1, 4), at(3, 7)];
    expect(coalescePositions(acked)).toEqual({
      positions: [at(1, 9), at(3, 7)],
      ranges: [range(1, 3, 5), range(2, 0, 1)],
    });
  });

  it('never joins the last entry of one ledger to the first of the next', () => {
    expect(coalescePositions([at(1, 4), at(2, 0)])).toEqual({ positions: [at(1, 4), at(2, 0)], ranges: [] });
  });
});

describe('ackForStream', () => {
  const ack = { positions: [at(1, 1), at(1, 2), at(1, 3), at(1, 7)], requestId: 4n };

  it('sends ranges only to an owner that said it takes them', () => {
    expect(ackForStream(ack, false)).toBe(ack);
    expect(ackForStream(ack, true)).toEqual({ positions: [at(1, 7)], ranges: [range(1, 1, 3)], requestId: 4n });
  });

  it('leaves an ack without runs as it is', () => {
    const scattered = { positions: [at(1, 1), at(1, 3)] };
    expect(ackForStream(scattered, true)).toBe(scattered);
  });
});
