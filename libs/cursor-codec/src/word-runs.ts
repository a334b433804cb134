/**
 * A growable list of runs [first, last], filled by the containers in tight
 * loops so that iterating millions of ranges costs one callback per range
 * and no allocation. A run that starts right after the previous one extends
 * it, which is how runs meeting at region boundaries become one range.
 */
export class RunList {
  firsts = new Float64Array(256);
  lasts = new Float64Array(256);
  length = 0;

  push(first: number, last: number): void {
    const count = this.length;
    if (count > 0 && this.lasts[count - 1] === first - 1) {
      this.lasts[count - 1] = last;
      return;
    }
    if (count === this.firsts.length) this.grow();
    this.firsts[count] = first;
    this.lasts[count] = last;
    this.length = count + 1;
  }

  /** Keeps only the last run (it may still grow into the next block). */
  keepLast(): void {
    if (this.length <= 1) return;
    this.firsts[0] = this.firsts[this.length - 1] ?? 0;
    this.lasts[0] = this.lasts[this.length - 1] ?? 0;
    this.length = 1;
  }

  clear(): void {
    this.length = 0;
  }

  private grow(): void {
    const firsts = new Float64Array(this.firsts.length * 2);
    const lasts = new Float64Array(this.lasts.length * 2);
    firsts.set(this.firsts);
    lasts.set(this.lasts);
    this.firsts = firsts;
    this.lasts = lasts;
  }
}

/**
 * Appends the runs of set bits in `words` to `list`, offset by `base`. Cost is
 * proportional to the number of words plus the number of runs; the bit
 * arithmetic is inline because this is the hottest loop of every encoder.
 */
export function collectRunsFromWords(words: Uint32Array, base: number, list: RunList, wordCount = words.length): void {
  let runStart = -1;
  for (let index = 0; index < wordCount; index++) {
    let word = words[index] ?? 0;
    if (runStart < 0 && word === 0) continue;
    const wordBase = base + index * 32;
    if (runStart >= 0) {
      // A run is open from an earlier word: it ends at the first clear bit here.
      const inverted = ~word;
      if (inverted === 0) continue;
      const end = 31 - Math.clz32(inverted & -inverted);
      list.push(runStart, wordBase + end - 1);
      runStart = -1;
      word &= -1 << end;
    }
    while (word !== 0) {
      const start = 31 - Math.clz32(word & -word);
      // Set the bits below start, so the lowest clear bit of the result is where the run ends.
      const inverted = ~(word | ((1 << start) - 1));
      if (inverted === 0) {
        runStart = wordBase + start;
        break;
      }
      const end = 31 - Math.clz32(inverted & -inverted);
      list.push(wordBase + start, wordBase + end - 1);
      word &= -1 << end;
    }
  }
  if (runStart >= 0) list.push(runStart, base + wordCount * 32 - 1);
}
