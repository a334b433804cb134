import { EntryCache } from './entry-cache.js';
import type { ManagedLedgerEntry } from '../entry.js';

/** 128 bookkeeping bytes are counted per entry on top of its payload. */
const OVERHEAD = 128;

function entry(ledgerId: number, entryId: number, payloadBytes = 72): ManagedLedgerEntry {
  return {
    position: { ledgerId, entryId },
    payload: new Uint8Array(payloadBytes),
    firstOffset: entryId,
    lastOffset: entryId,
    numMessages: 1,
    brokerTimestampMs: 0,
  };
}

/** Entry ids of `ledgerId` from `from` to `to` that the cache holds. */
function heldIds(cache: EntryCache, ledgerId: number, from: number, to: number): number[] {
  const held: number[] = [];
  for (let id = from; id <= to; id++) if (cache.get({ ledgerId, entryId: id }) !== undefined) held.push(id);
  return held;
}

describe('EntryCache', () => {
  it('keeps the newest entries within its byte bound, evicting the oldest inserted first', () => {
    const cache = new EntryCache(10 * (72 + OVERHEAD));
    for (let id = 0; id < 25; id++) cache.put(entry(1, id));
    expect(cache.count).toBe(10);
    expect(cache.sizeBytes).toBe(10 * (72 + OVERHEAD));
    expect(heldIds(cache, 1, 0, 24)).toEqual([15, 16, 17, 18, 19, 20, 21, 22, 23, 24]);
  });

  it('evicts by insertion order across ledgers, and ignores a second put of a held position', () => {
    const cache = new EntryCache(3 * (72 + OVERHEAD));
    const first = entry(1, 0);
    cache.put(first);
    cache.put(entry(1, 0));
    cache.put(entry(2, 0));
    cache.put(entry(1, 1));
    expect(cache.get({ ledgerId: 1, entryId: 0 })).toBe(first);
    cache.put(entry(2, 1));
    expect(heldIds(cache, 1, 0, 1)).toEqual([1]);
    expect(heldIds(cache, 2, 0, 1)).toEqual([0, 1]);
  });

  it('does not cache an entry larger than the whole bound', () => {
    const cache = new EntryCache(1_000);
    cache.put(entry(1, 0, 1_000));
    expect(cache.count).toBe(0);
    expect(cache.sizeBytes).toBe(0);
  });

  it('drops a ledger and everything before a position, and counts only what it still holds', () => {
    const cache = new EntryCache(1 << 20);
    for (let id = 0; id < 10; id++) cache.put(entry(1, id));
    for (let id = 0; id < 10; id++) cache.put(entry(2, id));
    cache.evictLedger(1);
    expect(heldIds(cache, 1, 0, 9)).toEqual([]);
    cache.evictBefore({ ledgerId: 2, entryId: 4 });
    expect(heldIds(cache, 2, 0, 9)).toEqual([4, 5, 6, 7, 8, 9]);
    expect(cache.count).toBe(6);
    expect(cache.sizeBytes).toBe(6 * (72 + OVERHEAD));
  });

  it('evicts an entry put again after its ledger was dropped by its new insertion, not its old one', () => {
    const cache = new EntryCache(3 * (72 + OVERHEAD));
    cache.put(entry(1, 0));
    cache.put(entry(1, 1));
    cache.evictLedger(1);
    const again = entry(1, 0);
    cache.put(again);
    cache.put(entry(1, 2));
    cache.put(entry(1, 3));
    expect(cache.get({ ledgerId: 1, entryId: 0 })).toBe(again);
    cache.put(entry(1, 4));
    expect(heldIds(cache, 1, 0, 4)).toEqual([2, 3, 4]);
    expect(cache.sizeBytes).toBe(3 * (72 + OVERHEAD));
  });

  it('keeps its counts exact over many thousands of puts, evictions and trims', () => {
    const capacity = 500;
    const cache = new EntryCache(capacity * (72 + OVERHEAD));
    let ledgerId = 1;
    for (let id = 0; id < 50_000; id++) {
      if (id % 7_000 === 0) ledgerId++;
      cache.put(entry(ledgerId, id));
      // A trim now and then, as the trimmer drops ledgers every reader has passed.
      if (id % 10_000 === 9_999) cache.evictLedger(ledgerId - 1);
    }
    expect(cache.count).toBe(capacity);
    expect(heldIds(cache, ledgerId, 50_000 - capacity, 49_999)).toHaveLength(capacity);
    expect(cache.sizeBytes).toBe(capacity * (72 + OVERHEAD));
  });

  it('lets go of trimmed entries even when no put follows (their payloads are not held)', () => {
    const cache = new EntryCache(1 << 30);
    for (let id = 0; id < 5_000; id++) cache.put(entry(1, id, 1));
    cache.evictLedger(1);
    expect(cache.count).toBe(0);
    expect((cache as unknown as { order: unknown[] }).order.length).toBeLessThanOrEqual(1_024);
  });
});
