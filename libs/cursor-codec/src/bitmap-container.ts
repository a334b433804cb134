import * as bits from './bits.js';
import * as regionLayout from './container.js';
import type { Container } from './container.js';
import * as wordRuns from './word-runs.js';
import type { RunList } from './word-runs.js';

// Module-local copies of imports used in hot loops: under the CommonJS interop
// this code runs with (tsx, Jest), every use of an imported binding is a getter call.
const { lowestBit32, popcount32, rangeMask32, runStarts32 } = bits;
const { BITMAP_WORDS } = regionLayout;
const { collectRunsFromWords } = wordRuns;

/**
 * A region as a 65536-bit bitmap (8 KiB). Cardinality and run count are kept
 * up to date on every change, so choosing a representation and counting
 * ranges never rescans the words.
 */
export class BitmapContainer implements Container {
  readonly kind = 'bitmap';
  readonly words: Uint32Array;
  private total: number;
  private runs: number;

  private constructor(words: Uint32Array, total: number, runs: number) {
    this.words = words;
    this.total = total;
    this.runs = runs;
  }

  /** Takes ownership of `words` (BITMAP_WORDS long) and counts its bits and runs. */
  static fromWords(words: Uint32Array): BitmapContainer {
    let total = 0;
    let runs = 0;
    let carry = 0;
    for (let index = 0; index < BITMAP_WORDS; index++) {
      const word = words[index] ?? 0;
      total += popcount32(word);
      runs += runStarts32(word, carry);
      carry = word >>> 31;
    }
    return new BitmapContainer(words, total, runs);
  }

  static fromContainer(source: Container): BitmapContainer {
    const words = new Uint32Array(BITMAP_WORDS);
    source.writeWords(words);
    return new BitmapContainer(words, source.cardinality, source.runCount);
  }

  get cardinality(): number {
    return this.total;
  }

  get runCount(): number {
    return this.runs;
  }

  has(offset: number): boolean {
    return (((this.words[offset >>> 5] ?? 0) >>> (offset & 31)) & 1) === 1;
  }

  add(offset: number): boolean {
    if (this.has(offset)) return false;
    const left = offset > 0 && this.has(offset - 1) ? 1 : 0;
    const right = offset < BITMAP_WORDS * 32 - 1 && this.has(offset + 1) ? 1 : 0;
    this.words[offset >>> 5] = ((this.words[offset >>> 5] ?? 0) | (1 << (offset & 31))) >>> 0;
    this.total++;
    this.runs += 1 - left - right;
    return true;
  }

  addRange(first: number, last: number): number {
    // Every run that overlaps or touches [first, last] merges with it into one.
    const touching = (first > 0 && this.has(first - 1) ? 1 : 0) + this.countRunStarts(first, last + 1);
    let added = 0;
    const firstWord = first >>> 5;
    const lastWord = last >>> 5;
    for (let index = firstWord; index <= lastWord; index++) {
      const mask = rangeMask32(index === firstWord ? first & 31 : 0, index === lastWord ? last & 31 : 31);
      const before = this.words[index] ?? 0;
      added += popcount32((mask & ~before) >>> 0);
      this.words[index] = (before | mask) >>> 0;
    }
    this.total += added;
    this.runs += 1 - touching;
    return added;
  }

  removeUpTo(offset: number): number {
    const continues = offset + 1 < BITMAP_WORDS * 32 && this.has(offset) && this.has(offset + 1) ? 1 : 0;
    const startsRemoved = this.countRunStarts(0, offset);
    let removed = 0;
    const lastWord = offset >>> 5;
    for (let index = 0; index <= lastWord; index++) {
      const mask = index === lastWord ? rangeMask32(0, offset & 31) : 0xffffffff;
      const before = this.words[index] ?? 0;
      removed += popcount32((before & mask) >>> 0);
      this.words[index] = (before & ~mask) >>> 0;
    }
    this.total -= removed;
    // A run cut in two keeps its upper part, which now starts at offset + 1.
    this.runs += continues - startsRemoved;
    return removed;
  }

  /** Number of run starts at offsets in [first, last] (last may be one past the region). */
  private countRunStarts(first: number, last: number): number {
    const end = Math.min(last, BITMAP_WORDS * 32 - 1);
    if (first > end) return 0;
    let starts = 0;
    const firstWord = first >>> 5;
    const lastWord = end >>> 5;
    for (let index = firstWord; index <= lastWord; index++) {
      const word = this.words[index] ?? 0;
      const carry = index > 0 ? (this.words[index - 1] ?? 0) >>> 31 : 0;
      const startBits = (word & ~((word << 1) | carry)) >>> 0;
      const mask = rangeMask32(index === firstWord ? first & 31 : 0, index === lastWord ? end & 31 : 31);
      starts += popcount32((startBits & mask) >>> 0);
    }
    return starts;
  }

  collectRuns(base: number, list: RunList): void {
    collectRunsFromWords(this.words, base, list);
  }

  firstOffset(): number {
    for (let index = 0; index < BITMAP_WORDS; index++) {
      const word = this.words[index] ?? 0;
      if (word !== 0) return index * 32 + lowestBit32(word);
    }
    return -1;
  }

  lastOffset(): number {
    for (let index = BITMAP_WORDS - 1; index >= 0; index--) {
      const word = this.words[index] ?? 0;
      if (word !== 0) return index * 32 + 31 - Math.clz32(word);
    }
    return -1;
  }

  writeWords(target: Uint32Array): void {
    target.set(this.words);
  }

  clone(): BitmapContainer {
    return new BitmapContainer(this.words.slice(), this.total, this.runs);
  }

  memoryBytes(): number {
    return 64 + this.words.byteLength;
  }
}
