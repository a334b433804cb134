import { lowestBit32 } from './bits.js';
import type { RunVisitor } from './container.js';

/**
 * Visits the runs of set bits in a word array in ascending order, merging
 * runs that cross word boundaries. Cost is proportional to the number of
 * words plus the number of runs. Returns false if the visitor stopped it.
 */
export function forEachRunInWords(words: Uint32Array, visit: RunVisitor, wordCount = words.length): boolean {
  let runStart = -1;
  for (let index = 0; index < wordCount; index++) {
    let word = words[index] ?? 0;
    const base = index * 32;
    if (runStart >= 0) {
      // A run is open from an earlier word: it ends at the first clear bit here.
      const inverted = ~word >>> 0;
      if (inverted === 0) continue;
      const end = lowestBit32(inverted);
      if (!visit(runStart, base + end - 1)) return false;
      runStart = -1;
      word = (word & ~((2 ** end - 1) >>> 0)) >>> 0;
    }
    while (word !== 0) {
      const start = lowestBit32(word);
      const fromStart = (word | ((2 ** start - 1) >>> 0)) >>> 0;
      const inverted = ~fromStart >>> 0;
      if (inverted === 0) {
        runStart = base + start;
        break;
      }
      const end = lowestBit32(inverted);
      if (!visit(base + start, base + end - 1)) return false;
      word = (word & ~((2 ** end - 1) >>> 0)) >>> 0;
    }
  }
  if (runStart >= 0) return visit(runStart, wordCount * 32 - 1);
  return true;
}
