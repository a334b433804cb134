import fc from 'fast-check';
import { buildAckMap, rangesOf, type MapLedger } from './ack-map.js';

const twoLedgers: MapLedger[] = [
  { ledgerId: 1, entries: 10, firstOffset: 0, lastOffset: 9 },
  // Batch entries: 10 entries hold 40 messages, so entry offsets are not known.
  { ledgerId: 2, entries: 10, firstOffset: 10, lastOffset: 49 },
];

describe('the ack-hole map', () => {
  it('lays the entries after mark-delete end to end across ledgers and counts acks per cell', () => {
    const map = buildAckMap(
      twoLedgers,
      { ledgerId: 1, entryId: 2 },
      rangesOf([
        { ledgerId: 1, firstEntryId: 4, lastEntryId: 5 },
        { ledgerId: 2, firstEntryId: 0, lastEntryId: 9 },
        { ledgerId: 0, firstEntryId: 0, lastEntryId: 3 },
      ]),
      4,
    );
    expect(map).toMatchObject({
      spanFirst: { ledgerId: 1, entryId: 3 },
      spanLast: { ledgerId: 2, entryId: 9 },
      spanEntries: 17,
      ackedRanges: 3,
      ackedEntries: 12,
      unplacedRanges: 1,
    });
    expect(map.cells.map((cell) => [cell.entries, cell.ackedEntries, cell.ranges])).toEqual([
      [5, 2, 1],
      [5, 3, 1],
      [5, 5, 1],
      [2, 2, 1],
    ]);
    expect(map.cells[0]).toMatchObject({ first: { ledgerId: 1, entryId: 3 }, firstOffset: 3, lastOffset: 7 });
    // The second cell runs from ledger 1 into ledger 2, whose entries have no single offset.
    expect(map.cells[1]).toMatchObject({ last: { ledgerId: 2, entryId: 2 }, firstOffset: 8, lastOffset: -1 });
  });

  it('is empty when everything up to the last entry is acknowledged by mark-delete', () => {
    const map = buildAckMap(twoLedgers, { ledgerId: 2, entryId: 9 }, rangesOf([]), 16);
    expect(map).toMatchObject({ spanEntries: 0, cells: [], spanFirst: undefined });
  });

  it('starts at the first listed ledger when mark-delete is in a ledger already trimmed', () => {
    const map = buildAckMap(twoLedgers, { ledgerId: 0, entryId: 7 }, rangesOf([]), 1);
    expect(map).toMatchObject({ spanEntries: 20, spanFirst: { ledgerId: 1, entryId: 0 } });
  });

  it('keeps its totals whatever the holes and the cell count', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 300 }),
        fc.uniqueArray(fc.integer({ min: 0, max: 299 }), { maxLength: 120 }),
        fc.integer({ min: 1, max: 50 }),
        (markEntry, acked, cells) => {
          const ledgers = [{ ledgerId: 7, entries: 300, firstOffset: 0, lastOffset: 299 }];
          const sorted = acked.filter((entry) => entry > markEntry).sort((a, b) => a - b);
          const ranges = sorted.map((entry) => ({ ledgerId: 7, firstEntryId: entry, lastEntryId: entry }));
          const map = buildAckMap(ledgers, { ledgerId: 7, entryId: markEntry }, rangesOf(ranges), cells);
          expect(map.cells.length).toBeLessThanOrEqual(cells);
          expect(map.cells.reduce((sum, cell) => sum + cell.entries, 0)).toBe(map.spanEntries);
          expect(map.cells.reduce((sum, cell) => sum + cell.ackedEntries, 0)).toBe(sorted.length);
          expect(map.ackedEntries).toBe(sorted.length);
        },
      ),
    );
  });
});
