import fc from 'fast-check';
import { HeadHeap } from './head-heap.js';

describe('HeadHeap', () => {
  it('hands out every bucket run merged in name order, as a sort of all names would', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uniqueArray(fc.string({ maxLength: 6 }), { maxLength: 20 }), { maxLength: 70 }),
        (runs) => {
          const sorted = runs.map((names) => [...names].sort());
          const positions = sorted.map(() => 0);
          const heap = new HeadHeap();
          sorted.forEach((names, bucket) => {
            if (names.length > 0) heap.push(bucket, names[0]!);
          });
          const merged: string[] = [];
          while (heap.size > 0) {
            const bucket = heap.topBucket();
            merged.push(heap.topName());
            const next = sorted[bucket]![++positions[bucket]!];
            if (next === undefined) heap.popTop();
            else heap.replaceTop(next);
          }
          expect(merged).toEqual(sorted.flat().sort());
          expect(heap.topBucket()).toBe(-1);
        },
      ),
    );
  });

  it('fails loudly when a bucket goes back or an empty heap is used', () => {
    const heap = new HeadHeap();
    expect(() => heap.topName()).toThrow(/empty/);
    expect(() => heap.popTop()).toThrow(/empty/);
    heap.push(3, 'm');
    expect(() => heap.replaceTop('m')).toThrow(/went back/);
    expect(() => heap.replaceTop('a')).toThrow(/went back/);
  });
});
