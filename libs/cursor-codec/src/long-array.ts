import { BitmapContainer } from './bitmap-container.js';
import { BITMAP_WORDS, REGION_SIZE } from './container.js';
import { LedgerAcks } from './ledger-acks.js';

/** 64-bit words in one region. */
export const LONG_WORDS_PER_REGION = REGION_SIZE / 64;
/**
 * Pulsar keeps a ledger's bitset in a java.util.BitSet indexed by int, so the
 * long-array format can only hold entry ids below 2^31 - 1.
 */
export const LONG_ARRAY_MAX_ENTRY_ID = 2 ** 31 - 2;

/** Shared by every call: the function is synchronous and its visitors never call back into it. */
const wordScratch = new Uint32Array(BITMAP_WORDS);

/** Receives `count` consecutive identical 64-bit words given as 32-bit halves. */
export type LongWordVisitor = (lo: number, hi: number, count: number) => void;

/**
 * Visits a ledger's acknowledged entries as Pulsar's long-array: the words of
 * a BitSet where bit i is entry i, from entry 0 up to the word holding the last
 * acknowledged entry (BitSet.toLongArray drops trailing zero words). Gaps and
 * full spans are reported as repeated words, so sizing costs O(blocks).
 */
export function forEachLongArrayWord(ledger: LedgerAcks, visit: LongWordVisitor): void {
  const scratch = wordScratch;
  const blockCount = ledger.blockCount;
  let nextRegion = 0;
  let blockIndex = 0;
  ledger.forEachBlock((firstRegion, container, lastRegion) => {
    blockIndex++;
    if (firstRegion > nextRegion) visit(0, 0, (firstRegion - nextRegion) * LONG_WORDS_PER_REGION);
    nextRegion = lastRegion + 1;
    if (container === null) {
      visit(0xffffffff, 0xffffffff, (lastRegion - firstRegion + 1) * LONG_WORDS_PER_REGION);
      return;
    }
    container.writeWords(scratch);
    const words = blockIndex === blockCount ? Math.floor(container.lastOffset() / 64) + 1 : LONG_WORDS_PER_REGION;
    let runLo = scratch[0] ?? 0;
    let runHi = scratch[1] ?? 0;
    let runCount = 1;
    for (let word = 1; word < words; word++) {
      const lo = scratch[word * 2] ?? 0;
      const hi = scratch[word * 2 + 1] ?? 0;
      if (lo === runLo && hi === runHi) {
        runCount++;
        continue;
      }
      visit(runLo, runHi, runCount);
      runLo = lo;
      runHi = hi;
      runCount = 1;
    }
    visit(runLo, runHi, runCount);
  });
}

/**
 * Rebuilds a ledger from long-array words pushed in order. Each region's
 * words are gathered into a bitmap and handed to the ledger, which keeps the
 * cheapest representation. Word count is bounded by the caller (it comes from
 * input bytes, two or more per word).
 */
export class LongArrayBuilder {
  readonly ledger = new LedgerAcks();
  private words = new Uint32Array(BITMAP_WORDS);
  private wordIndex = 0;
  private dirty = false;

  push(lo: number, hi: number): void {
    const slot = this.wordIndex % LONG_WORDS_PER_REGION;
    if ((lo | hi) !== 0) {
      this.words[slot * 2] = lo;
      this.words[slot * 2 + 1] = hi;
      this.dirty = true;
    }
    this.wordIndex++;
    if (this.wordIndex % LONG_WORDS_PER_REGION === 0) this.flush(this.wordIndex / LONG_WORDS_PER_REGION - 1);
  }

  /** Number of words pushed so far. */
  get wordCount(): number {
    return this.wordIndex;
  }

  finish(): LedgerAcks {
    if (this.wordIndex % LONG_WORDS_PER_REGION !== 0) this.flush(Math.floor(this.wordIndex / LONG_WORDS_PER_REGION));
    return this.ledger;
  }

  private flush(region: number): void {
    if (!this.dirty) return;
    this.ledger.appendContainer(region, BitmapContainer.fromWords(this.words));
    this.words = new Uint32Array(BITMAP_WORDS);
    this.dirty = false;
  }
}
