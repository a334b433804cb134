import { rangeMask32 } from './bits.js';
import { type Container } from './container.js';
import { RunList, collectRunsFromWords } from './word-runs.js';

const INITIAL_CAPACITY_RUNS = 4;

/**
 * A region as a sorted list of disjoint, non-adjacent runs [start, end],
 * stored as pairs in one Uint16Array (4 bytes a run).
 */
export class RunContainer implements Container {
  readonly kind = 'runs';
  private runs: Uint16Array;
  private count = 0;
  private total = 0;

  private constructor(capacityRuns: number) {
    this.runs = new Uint16Array(Math.max(INITIAL_CAPACITY_RUNS, capacityRuns) * 2);
  }

  /** An empty container with room for `capacityRuns` runs, to be filled with appendRun. */
  static withCapacity(capacityRuns: number): RunContainer {
    return new RunContainer(capacityRuns);
  }

  static ofRange(first: number, last: number): RunContainer {
    const container = new RunContainer(INITIAL_CAPACITY_RUNS);
    container.insertRun(0, first, last);
    container.total = last - first + 1;
    return container;
  }

  /** Builds a container from a bitmap's words (used when a bitmap thins out). */
  static fromWords(words: Uint32Array, runCount: number): RunContainer {
    const container = new RunContainer(runCount);
    const list = new RunList();
    collectRunsFromWords(words, 0, list);
    for (let index = 0; index < list.length; index++)
      container.appendRun(list.firsts[index] ?? 0, list.lasts[index] ?? 0);
    return container;
  }

  get cardinality(): number {
    return this.total;
  }

  get runCount(): number {
    return this.count;
  }

  start(index: number): number {
    return this.runs[index * 2] ?? 0;
  }

  end(index: number): number {
    return this.runs[index * 2 + 1] ?? 0;
  }

  /** Index of the last run whose start is <= offset, or -1. */
  private floorRun(offset: number): number {
    let low = 0;
    let high = this.count - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      if (this.start(middle) <= offset) low = middle + 1;
      else high = middle - 1;
    }
    return high;
  }

  has(offset: number): boolean {
    const index = this.floorRun(offset);
    return index >= 0 && this.end(index) >= offset;
  }

  add(offset: number): boolean {
    const index = this.floorRun(offset);
    if (index >= 0 && this.end(index) >= offset) return false;
    const joinsLeft = index >= 0 && this.end(index) === offset - 1;
    const joinsRight = index + 1 < this.count && this.start(index + 1) === offset + 1;
    if (joinsLeft && joinsRight) {
      this.runs[index * 2 + 1] = this.end(index + 1);
      this.removeRuns(index + 1, 1);
    } else if (joinsLeft) {
      this.runs[index * 2 + 1] = offset;
    } else if (joinsRight) {
      this.runs[(index + 1) * 2] = offset;
    } else {
      this.insertRun(index + 1, offset, offset);
    }
    this.total++;
    return true;
  }

  addRange(first: number, last: number): number {
    // Acks mostly arrive in order: a range past the last run is appended without a search.
    if (this.count === 0 || first > this.end(this.count - 1) + 1) {
      this.insertRun(this.count, first, last);
      this.total += last - first + 1;
      return last - first + 1;
    }
    // Runs that overlap or touch [first, last] merge with it into one run.
    let low = this.floorRun(first - 1);
    if (low < 0 || this.end(low) < first - 1) low++;
    const high = this.floorRun(last + 1);
    if (low > high) {
      this.insertRun(low, first, last);
      this.total += last - first + 1;
      return last - first + 1;
    }
    const mergedStart = Math.min(first, this.start(low));
    const mergedEnd = Math.max(last, this.end(high));
    let covered = 0;
    for (let index = low; index <= high; index++) covered += this.end(index) - this.start(index) + 1;
    this.runs[low * 2] = mergedStart;
    this.runs[low * 2 + 1] = mergedEnd;
    this.removeRuns(low + 1, high - low);
    const added = mergedEnd - mergedStart + 1 - covered;
    this.total += added;
    return added;
  }

  removeUpTo(offset: number): number {
    const index = this.floorRun(offset);
    if (index < 0) return 0;
    let removed = 0;
    for (let run = 0; run < index; run++) removed += this.end(run) - this.start(run) + 1;
    const end = this.end(index);
    if (end > offset) {
      removed += offset - this.start(index) + 1;
      this.runs[index * 2] = offset + 1;
      this.removeRuns(0, index);
    } else {
      removed += end - this.start(index) + 1;
      this.removeRuns(0, index + 1);
    }
    this.total -= removed;
    return removed;
  }

  /** Appends a run that starts after the last one; the caller guarantees order. */
  appendRun(first: number, last: number): void {
    if (this.count > 0 && this.end(this.count - 1) === first - 1) {
      this.runs[(this.count - 1) * 2 + 1] = last;
    } else {
      this.insertRun(this.count, first, last);
    }
    this.total += last - first + 1;
  }

  collectRuns(base: number, list: RunList): void {
    const runs = this.runs;
    for (let index = 0; index < this.count * 2; index += 2)
      list.push(base + (runs[index] ?? 0), base + (runs[index + 1] ?? 0));
  }

  firstOffset(): number {
    return this.start(0);
  }

  lastOffset(): number {
    return this.end(this.count - 1);
  }

  writeWords(target: Uint32Array): void {
    target.fill(0);
    for (let index = 0; index < this.count; index++) {
      setBits(target, this.start(index), this.end(index));
    }
  }

  clone(): RunContainer {
    const copy = new RunContainer(this.count);
    copy.runs.set(this.runs.subarray(0, this.count * 2));
    copy.count = this.count;
    copy.total = this.total;
    return copy;
  }

  memoryBytes(): number {
    return 64 + this.runs.byteLength;
  }

  private insertRun(index: number, first: number, last: number): void {
    if ((this.count + 1) * 2 > this.runs.length) {
      const grown = new Uint16Array(this.runs.length * 2);
      grown.set(this.runs.subarray(0, this.count * 2));
      this.runs = grown;
    }
    if (index < this.count) this.runs.copyWithin(index * 2 + 2, index * 2, this.count * 2);
    this.runs[index * 2] = first;
    this.runs[index * 2 + 1] = last;
    this.count++;
  }

  private removeRuns(index: number, howMany: number): void {
    if (howMany === 0) return;
    this.runs.copyWithin(index * 2, (index + howMany) * 2, this.count * 2);
    this.count -= howMany;
  }
}

/** Sets bits [first, last] in a word array. */
export function setBits(words: Uint32Array, first: number, last: number): void {
  const firstWord = first >>> 5;
  const lastWord = last >>> 5;
  for (let word = firstWord; word <= lastWord; word++) {
    const from = word === firstWord ? first & 31 : 0;
    const to = word === lastWord ? last & 31 : 31;
    words[word] = ((words[word] ?? 0) | rangeMask32(from, to)) >>> 0;
  }
}
