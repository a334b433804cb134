import fc from 'fast-check';
import { LedgerlineError } from '@ledgerline/errors';
import { AckSet, type AckRange } from './ack-set.js';
import { REGION_SIZE } from './container.js';
import { ackSetArbitrary, denseAckSetArbitrary } from './testing/state-arbitraries.js';
import { CursorCodecReason } from './errors.js';

/** The naive model: a plain set of "ledger:entry" positions, sorted when read. */
class SortedSetModel {
  private readonly positions = new Map<number, Set<number>>();

  add(ledgerId: number, entryId: number): boolean {
    let entries = this.positions.get(ledgerId);
    if (entries === undefined) this.positions.set(ledgerId, (entries = new Set()));
    if (entries.has(entryId)) return false;
    entries.add(entryId);
    return true;
  }

  has(ledgerId: number, entryId: number): boolean {
    return this.positions.get(ledgerId)?.has(entryId) ?? false;
  }

  removeUpTo(ledgerId: number, entryId: number): number {
    let removed = 0;
    for (const [ledger, entries] of this.positions) {
      for (const entry of entries) {
        if (ledger < ledgerId || (ledger === ledgerId && entry <= entryId)) {
          entries.delete(entry);
          removed++;
        }
      }
      if (entries.size === 0) this.positions.delete(ledger);
    }
    return removed;
  }

  size(): number {
    let total = 0;
    for (const entries of this.positions.values()) total += entries.size;
    return total;
  }

  ranges(): AckRange[] {
    const ranges: AckRange[] = [];
    for (const ledgerId of [...this.positions.keys()].sort((a, b) => a - b)) {
      const sorted = [...(this.positions.get(ledgerId) ?? [])].sort((a, b) => a - b);
      for (const entry of sorted) {
        const last = ranges[ranges.length - 1];
        if (last !== undefined && last.ledgerId === ledgerId && last.lastEntryId === entry - 1)
          last.lastEntryId = entry;
        else ranges.push({ ledgerId, firstEntryId: entry, lastEntryId: entry });
      }
    }
    return ranges;
  }
}

// Entry ids cluster near region boundaries so that runs cross them, plus a few
// small ids so that the same entries are hit repeatedly.
const entryId = fc.oneof(
  fc.integer({ min: 0, max: 40 }),
  fc.integer({ min: REGION_SIZE - 20, max: REGION_SIZE + 20 }),
  fc.integer({ min: 3 * REGION_SIZE - 5, max: 3 * REGION_SIZE + 5 }),
);
const ledgerId = fc.integer({ min: 0, max: 3 });
const operation = fc.oneof(
  fc.record({ kind: fc.constant('add' as const), ledgerId, entryId }),
  fc.record({ kind: fc.constant('range' as const), ledgerId, entryId, length: fc.integer({ min: 1, max: 30 }) }),
  fc.record({ kind: fc.constant('remove' as const), ledgerId, entryId: fc.oneof(entryId, fc.constant(-1)) }),
);

describe('AckSet against a sorted-set model', () => {
  it('agrees on add, addRange, has, ranges, rangeCount, size and removeUpTo', () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 60 }), (operations) => {
        const set = new AckSet();
        const model = new SortedSetModel();
        for (const op of operations) {
          if (op.kind === 'add') {
            expect(set.add(op.ledgerId, op.entryId)).toBe(model.add(op.ledgerId, op.entryId));
          } else if (op.kind === 'range') {
            let added = 0;
            for (let entry = op.entryId; entry < op.entryId + op.length; entry++) {
              if (model.add(op.ledgerId, entry)) added++;
            }
            expect(set.addRange(op.ledgerId, op.entryId, op.entryId + op.length - 1)).toBe(added);
          } else {
            expect(set.removeUpTo({ ledgerId: op.ledgerId, entryId: op.entryId })).toBe(
              model.removeUpTo(op.ledgerId, op.entryId),
            );
          }
          expect(set.size()).toBe(model.size());
        }
        const ranges = model.ranges();
        expect([...set.ranges()]).toEqual(ranges);
        expect(set.rangeCount()).toBe(ranges.length);
        expect(set.isEmpty()).toBe(ranges.length === 0);
        for (const range of ranges) {
          expect(set.has(range.ledgerId, range.firstEntryId)).toBe(true);
          expect(set.has(range.ledgerId, range.lastEntryId + 1)).toBe(model.has(range.ledgerId, range.lastEntryId + 1));
        }
        expect(AckSet.fromRanges(ranges).equals(set)).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it('switches a region to a bitmap and back without changing its contents', () => {
    const set = new AckSet();
    const span = REGION_SIZE + 5000;
    for (let entry = 0; entry < span; entry += 2) set.add(7, entry);
    expect(set.rangeCount()).toBe(span / 2);
    expect(set.memoryBytes()).toBeLessThan(3 * 8192);
    // Filling every other hole thins the runs until the region becomes a run list again.
    for (let entry = 1; entry < span; entry += 4) set.add(7, entry);
    const expected: AckRange[] = [];
    for (let first = 0; first < span; first += 4)
      expected.push({ ledgerId: 7, firstEntryId: first, lastEntryId: first + 2 });
    expect(JSON.stringify([...set.ranges()])).toBe(JSON.stringify(expected));
    expect(set.rangeCount()).toBe(expected.length);
    for (let entry = 3; entry < span; entry += 4) set.add(7, entry);
    expect([...set.ranges()]).toEqual([{ ledgerId: 7, firstEntryId: 0, lastEntryId: span - 1 }]);
    expect(set.rangeCount()).toBe(1);
    expect(set.size()).toBe(span);
  });
});

describe('AckSet with huge ranges', () => {
  it('keeps a range across the whole safe-integer space in constant memory', () => {
    const set = new AckSet();
    set.addRange(1, 5, Number.MAX_SAFE_INTEGER);
    expect(set.size()).toBe(Number.MAX_SAFE_INTEGER - 4);
    expect(set.rangeCount()).toBe(1);
    expect(set.memoryBytes()).toBeLessThan(4096);
    set.add(1, 3);
    expect(set.removeUpTo({ ledgerId: 1, entryId: 2 ** 40 })).toBe(2 ** 40 - 4 + 1);
    expect(set.first()).toEqual({ ledgerId: 1, entryId: 2 ** 40 + 1 });
    expect(set.last()).toEqual({ ledgerId: 1, entryId: Number.MAX_SAFE_INTEGER });
    expect(set.rangeCount()).toBe(1);
  });

  it('merges full spans with partial regions on both sides', () => {
    const set = new AckSet();
    set.addRange(2, REGION_SIZE + 10, 5 * REGION_SIZE - 10);
    set.addRange(2, 0, REGION_SIZE + 9);
    set.addRange(2, 5 * REGION_SIZE - 9, 5 * REGION_SIZE - 1);
    expect([...set.ranges()]).toEqual([{ ledgerId: 2, firstEntryId: 0, lastEntryId: 5 * REGION_SIZE - 1 }]);
    expect(set.removeUpTo({ ledgerId: 2, entryId: 2 * REGION_SIZE + 5 })).toBe(2 * REGION_SIZE + 6);
    expect([...set.ranges()]).toEqual([
      { ledgerId: 2, firstEntryId: 2 * REGION_SIZE + 6, lastEntryId: 5 * REGION_SIZE - 1 },
    ]);
  });
});

describe('AckSet set operations', () => {
  it('clone is independent and union merges without changing its inputs', () => {
    const a = AckSet.fromRanges([{ ledgerId: 1, firstEntryId: 0, lastEntryId: 4 }]);
    const b = AckSet.fromRanges([
      { ledgerId: 1, firstEntryId: 5, lastEntryId: 9 },
      { ledgerId: 0, firstEntryId: 3, lastEntryId: 3 },
    ]);
    const copy = a.clone();
    copy.add(1, 100);
    expect(a.has(1, 100)).toBe(false);
    const merged = a.union(b);
    expect([...merged.ranges()]).toEqual([
      { ledgerId: 0, firstEntryId: 3, lastEntryId: 3 },
      { ledgerId: 1, firstEntryId: 0, lastEntryId: 9 },
    ]);
    expect(a.size()).toBe(5);
    expect(b.size()).toBe(6);
    expect(merged.ledgerIds()).toEqual([0, 1]);
    expect(a.addAll(b)).toBe(6);
    expect(a.equals(merged)).toBe(true);
  });

  it('forEachRange stops when the visitor returns false', () => {
    const set = AckSet.fromRanges([
      { ledgerId: 1, firstEntryId: 0, lastEntryId: 0 },
      { ledgerId: 1, firstEntryId: 2, lastEntryId: 2 },
      { ledgerId: 2, firstEntryId: 0, lastEntryId: 0 },
    ]);
    const seen: number[] = [];
    set.forEachRange((ledger, first) => {
      seen.push(ledger, first);
      return seen.length < 4;
    });
    expect(seen).toEqual([1, 0, 1, 2]);
  });
});

describe('AckSet input validation', () => {
  const invalid = [-1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1, Infinity];
  it.each(invalid)('rejects %p as an id with INVALID_ARGUMENT', (bad) => {
    const set = new AckSet();
    for (const call of [
      () => set.add(bad, 0),
      () => set.add(0, bad),
      () => set.has(bad, 0),
      () => set.addRange(0, bad, 1),
    ]) {
      try {
        call();
        throw new Error('expected a failure');
      } catch (error) {
        expect(LedgerlineError.is(error, CursorCodecReason.INVALID_POSITION)).toBe(true);
        expect((error as LedgerlineError).code).toBe('INVALID_ARGUMENT');
      }
    }
  });

  it('rejects a reversed range', () => {
    expect(() => new AckSet().addRange(1, 5, 4)).toThrow(LedgerlineError);
  });
});

describe('AckSet.keepFirstRanges', () => {
  it('keeps exactly the first N ranges, across runs, bitmaps and full spans', () => {
    fc.assert(
      fc.property(fc.oneof(ackSetArbitrary, denseAckSetArbitrary), fc.nat({ max: 3000 }), (set, wanted) => {
        const ranges = [...set.ranges()];
        const maxRanges = ranges.length === 0 ? 0 : wanted % (ranges.length + 1);
        const { kept, dropped } = set.keepFirstRanges(maxRanges);
        expect(JSON.stringify([...kept.ranges()])).toBe(JSON.stringify(ranges.slice(0, maxRanges)));
        expect(dropped).toBe(ranges.length - maxRanges);
        expect(kept.rangeCount()).toBe(maxRanges);
        expect(kept.size()).toBe(
          ranges.slice(0, maxRanges).reduce((sum, r) => sum + r.lastEntryId - r.firstEntryId + 1, 0),
        );
        expect(JSON.stringify([...set.ranges()])).toBe(JSON.stringify(ranges));
      }),
      { numRuns: 40 },
    );
  });
});

describe('AckSet.forEachRangeFrom', () => {
  const set = AckSet.fromRanges([
    { ledgerId: 1, firstEntryId: 0, lastEntryId: 2 },
    { ledgerId: 3, firstEntryId: 5, lastEntryId: 5 },
    { ledgerId: 3, firstEntryId: 9, lastEntryId: 12 },
    { ledgerId: 7, firstEntryId: 1, lastEntryId: 1 },
  ]);
  const from = (ledgerId: number, stopAfter = Infinity) => {
    const seen: string[] = [];
    set.forEachRangeFrom(ledgerId, (ledger, first, last) => {
      seen.push(`${ledger}:${first}-${last}`);
      return seen.length < stopAfter;
    });
    return seen;
  };

  it('visits the ranges of the ledgers at or after the one given, in order, and stops when told', () => {
    expect(from(0)).toEqual(['1:0-2', '3:5-5', '3:9-12', '7:1-1']);
    expect(from(2)).toEqual(['3:5-5', '3:9-12', '7:1-1']);
    expect(from(3)).toEqual(['3:5-5', '3:9-12', '7:1-1']);
    expect(from(7)).toEqual(['7:1-1']);
    expect(from(8)).toEqual([]);
    expect(from(1, 2)).toEqual(['1:0-2', '3:5-5']);
  });

  it('agrees with forEachRange from the start, on any set', () => {
    fc.assert(
      fc.property(fc.oneof(ackSetArbitrary, denseAckSetArbitrary), (acks) => {
        const all: string[] = [];
        acks.forEachRange((ledger, first, last) => void all.push(`${ledger}:${first}-${last}`));
        const fromStart: string[] = [];
        acks.forEachRangeFrom(0, (ledger, first, last) => void fromStart.push(`${ledger}:${first}-${last}`));
        expect(fromStart).toEqual(all);
      }),
      { numRuns: 40 },
    );
  });
});
