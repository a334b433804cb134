import { BitmapContainer } from './bitmap-container.js';
import * as bits from './bits.js';
import * as regionLayout from './container.js';
import type { Container } from './container.js';
import { RunContainer } from './run-container.js';
import { RunList } from './word-runs.js';

// Module-local copies of imports used in hot loops: under the CommonJS interop
// this code runs with (tsx, Jest), every use of an imported binding is a getter call.
const { rangeMask32 } = bits;
const { BITMAP_WORDS, LAST_OFFSET, MAX_RUNS_IN_RUN_CONTAINER, MIN_RUNS_IN_BITMAP_CONTAINER, REGION_SIZE } =
  regionLayout;

/** Run lists reused across iterations (one per nesting level), so a pass over many ledgers does not regrow them. */
const spareRunLists: RunList[] = [];

/** Receives one run of acknowledged entry ids [first, last]; returns false to stop. */
export type EntryRunVisitor = (first: number, last: number) => boolean;

/**
 * The acknowledged entries of one ledger: a sorted list of blocks. A block is
 * either one region with a container, or a span of whole regions that are all
 * acknowledged (container null). Blocks never overlap; adjacent full spans are
 * merged. Lookups are binary searches; the common case (acks arriving in
 * ascending order) touches only the last block.
 */
export class LedgerAcks {
  private starts: number[] = [];
  private ends: number[] = [];
  private containers: (Container | null)[] = [];
  private total = 0;
  private cachedRanges = -1;

  get size(): number {
    return this.total;
  }

  get blockCount(): number {
    return this.starts.length;
  }

  isEmpty(): boolean {
    return this.starts.length === 0;
  }

  /** Index of the last block whose first region is <= region, or -1. */
  private locate(region: number): number {
    const last = this.starts.length - 1;
    if (last < 0 || (this.starts[last] ?? 0) <= region) return last;
    let low = 0;
    let high = last;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      if ((this.starts[middle] ?? 0) <= region) low = middle + 1;
      else high = middle - 1;
    }
    return high;
  }

  private covers(index: number, region: number): boolean {
    return index >= 0 && (this.ends[index] ?? -1) >= region;
  }

  has(entryId: number): boolean {
    const region = Math.floor(entryId / REGION_SIZE);
    const index = this.locate(region);
    if (!this.covers(index, region)) return false;
    const container = this.containers[index];
    return container === null || container === undefined || container.has(entryId - region * REGION_SIZE);
  }

  add(entryId: number): boolean {
    const region = Math.floor(entryId / REGION_SIZE);
    const offset = entryId - region * REGION_SIZE;
    const index = this.locate(region);
    if (this.covers(index, region)) {
      const container = this.containers[index];
      if (container === null || container === undefined || !container.add(offset)) return false;
      this.changed(1);
      this.normalize(index);
      return true;
    }
    this.insertBlock(index + 1, region, region, RunContainer.ofRange(offset, offset));
    this.changed(1);
    return true;
  }

  /** Adds [first, last] (inclusive, first <= last); returns how many entries were new. */
  addRange(first: number, last: number): number {
    const firstRegion = Math.floor(first / REGION_SIZE);
    const lastRegion = Math.floor(last / REGION_SIZE);
    const firstOffset = first - firstRegion * REGION_SIZE;
    const lastOffset = last - lastRegion * REGION_SIZE;
    if (firstRegion === lastRegion) return this.addInRegion(firstRegion, firstOffset, lastOffset);
    let added = 0;
    if (firstOffset !== 0) added += this.addInRegion(firstRegion, firstOffset, LAST_OFFSET);
    const fullFrom = firstOffset === 0 ? firstRegion : firstRegion + 1;
    const fullTo = lastOffset === LAST_OFFSET ? lastRegion : lastRegion - 1;
    if (fullFrom <= fullTo) added += this.fillRegions(fullFrom, fullTo);
    if (lastOffset !== LAST_OFFSET) added += this.addInRegion(lastRegion, 0, lastOffset);
    return added;
  }

  private addInRegion(region: number, first: number, last: number): number {
    if (first === 0 && last === LAST_OFFSET) return this.fillRegions(region, region);
    const index = this.locate(region);
    if (this.covers(index, region)) {
      const container = this.containers[index];
      if (container === null || container === undefined) return 0;
      const added = container.addRange(first, last);
      if (added > 0) {
        this.changed(added);
        this.normalize(index);
      }
      return added;
    }
    this.insertBlock(index + 1, region, region, RunContainer.ofRange(first, last));
    this.changed(last - first + 1);
    return last - first + 1;
  }

  /** Marks regions [from, to] fully acknowledged, replacing whatever blocks were there. */
  private fillRegions(from: number, to: number): number {
    let low = this.locate(from);
    if (!this.covers(low, from)) low++;
    const high = this.locate(to);
    let spanFrom = from;
    let spanTo = to;
    let present = 0;
    for (let index = low; index <= high; index++) {
      const container = this.containers[index];
      const start = this.starts[index] ?? 0;
      const end = this.ends[index] ?? 0;
      if (container === null || container === undefined) {
        spanFrom = Math.min(spanFrom, start);
        spanTo = Math.max(spanTo, end);
        present += (end - start + 1) * REGION_SIZE;
      } else {
        present += container.cardinality;
      }
    }
    const added = (spanTo - spanFrom + 1) * REGION_SIZE - present;
    this.starts.splice(low, high - low + 1, spanFrom);
    this.ends.splice(low, high - low + 1, spanTo);
    this.containers.splice(low, high - low + 1, null);
    this.mergeFullNeighbours(low);
    this.changed(added);
    return added;
  }

  /** Removes every entry <= entryId; returns how many were removed. */
  removeUpTo(entryId: number): number {
    const region = Math.floor(entryId / REGION_SIZE);
    const offset = entryId - region * REGION_SIZE;
    const index = this.locate(region);
    if (index < 0) return 0;
    let removed = 0;
    for (let before = 0; before < index; before++) removed += this.blockSize(before);
    if (!this.covers(index, region)) {
      removed += this.blockSize(index);
      this.removeBlocks(0, index + 1);
    } else {
      removed += this.cutBlock(index, region, offset);
      this.removeBlocks(0, index);
    }
    this.changed(-removed);
    return removed;
  }

  /**
   * Removes every entry > entryId (used to keep only the first N ranges when a
   * limit applies). The cut region is rebuilt from its masked words.
   */
  removeAfter(entryId: number): number {
    const region = Math.floor(entryId / REGION_SIZE);
    const offset = entryId - region * REGION_SIZE;
    const index = this.locate(region);
    let removed = 0;
    for (let after = index + 1; after < this.starts.length; after++) removed += this.blockSize(after);
    this.removeBlocks(index + 1, this.starts.length - index - 1);
    if (this.covers(index, region) && offset < LAST_OFFSET) removed += this.cutBlockAfter(index, region, offset);
    else if (index >= 0 && this.containers[index] === null && (this.ends[index] ?? 0) > region) {
      removed += ((this.ends[index] ?? 0) - region) * REGION_SIZE;
      this.ends[index] = region;
    }
    this.changed(-removed);
    return removed;
  }

  private cutBlockAfter(index: number, region: number, offset: number): number {
    const container = this.containers[index];
    const before = this.blockSize(index);
    const start = this.starts[index] ?? 0;
    if (container === null || container === undefined) {
      this.removeBlocks(index, 1);
      this.insertBlock(index, region, region, RunContainer.ofRange(0, offset));
      if (start < region) this.insertBlock(index, start, region - 1, null);
      return before - this.blockSize(index) - (start < region ? this.blockSize(index + 1) : 0);
    }
    const words = new Uint32Array(BITMAP_WORDS);
    container.writeWords(words);
    const lastWord = offset >>> 5;
    words[lastWord] = ((words[lastWord] ?? 0) & rangeMask32(0, offset & 31)) >>> 0;
    words.fill(0, lastWord + 1);
    const cut = BitmapContainer.fromWords(words);
    if (cut.cardinality === 0) {
      this.removeBlocks(index, 1);
      return before;
    }
    this.containers[index] = cut;
    this.normalize(index);
    return before - cut.cardinality;
  }

  /** Removes offsets <= offset of `region` from the block covering it. */
  private cutBlock(index: number, region: number, offset: number): number {
    const container = this.containers[index];
    if (container !== null && container !== undefined) {
      const removed = container.removeUpTo(offset);
      if (container.cardinality === 0) this.removeBlocks(index, 1);
      else this.normalize(index);
      return removed;
    }
    const start = this.starts[index] ?? 0;
    const end = this.ends[index] ?? 0;
    const removed = (region - start) * REGION_SIZE + offset + 1;
    this.removeBlocks(index, 1);
    if (region < end) this.insertBlock(index, region + 1, end, null);
    if (offset < LAST_OFFSET) this.insertBlock(index, region, region, RunContainer.ofRange(offset + 1, LAST_OFFSET));
    return removed;
  }

  private blockSize(index: number): number {
    const container = this.containers[index];
    if (container !== null && container !== undefined) return container.cardinality;
    return ((this.ends[index] ?? 0) - (this.starts[index] ?? 0) + 1) * REGION_SIZE;
  }

  /** Keeps a container in its cheapest form; a full region joins the full spans. */
  private normalize(index: number): void {
    const container = this.containers[index];
    if (container === null || container === undefined) return;
    if (container.cardinality === REGION_SIZE) {
      this.containers[index] = null;
      this.mergeFullNeighbours(index);
    } else if (container.kind === 'runs' && container.runCount > MAX_RUNS_IN_RUN_CONTAINER) {
      this.containers[index] = BitmapContainer.fromContainer(container);
    } else if (container instanceof BitmapContainer && container.runCount < MIN_RUNS_IN_BITMAP_CONTAINER) {
      this.containers[index] = RunContainer.fromWords(container.words, container.runCount);
    }
  }

  private mergeFullNeighbours(index: number): void {
    let at = index;
    if (at > 0 && this.containers[at - 1] === null && (this.ends[at - 1] ?? 0) + 1 === this.starts[at]) {
      this.ends[at - 1] = this.ends[at] ?? 0;
      this.removeBlocks(at, 1);
      at--;
    }
    const next = at + 1;
    if (next < this.starts.length && this.containers[next] === null && (this.ends[at] ?? 0) + 1 === this.starts[next]) {
      this.ends[at] = this.ends[next] ?? 0;
      this.removeBlocks(next, 1);
    }
  }

  private insertBlock(index: number, start: number, end: number, container: Container | null): void {
    if (index === this.starts.length) {
      this.starts.push(start);
      this.ends.push(end);
      this.containers.push(container);
    } else {
      this.starts.splice(index, 0, start);
      this.ends.splice(index, 0, end);
      this.containers.splice(index, 0, container);
    }
  }

  private removeBlocks(index: number, howMany: number): void {
    if (howMany === 0) return;
    this.starts.splice(index, howMany);
    this.ends.splice(index, howMany);
    this.containers.splice(index, howMany);
  }

  private changed(delta: number): void {
    this.total += delta;
    this.cachedRanges = -1;
  }

  /**
   * Visits maximal runs in ascending order, joining runs that meet at region
   * boundaries. Each block's runs are gathered in a tight loop first; the last
   * one is held back until the next block shows whether it continues.
   */
  forEachRun(visit: EntryRunVisitor): boolean {
    const list = spareRunLists.pop() ?? new RunList();
    try {
      return this.visitRuns(visit, list);
    } finally {
      list.clear();
      spareRunLists.push(list);
    }
  }

  private visitRuns(visit: EntryRunVisitor, list: RunList): boolean {
    for (let index = 0; index < this.starts.length; index++) {
      const base = (this.starts[index] ?? 0) * REGION_SIZE;
      const container = this.containers[index];
      if (container === null || container === undefined)
        list.push(base, ((this.ends[index] ?? 0) + 1) * REGION_SIZE - 1);
      else container.collectRuns(base, list);
      for (let run = 0; run < list.length - 1; run++) {
        if (!visit(list.firsts[run] ?? 0, list.lasts[run] ?? 0)) return false;
      }
      list.keepLast();
    }
    return list.length === 0 || visit(list.firsts[0] ?? 0, list.lasts[0] ?? 0);
  }

  rangeCount(): number {
    if (this.cachedRanges >= 0) return this.cachedRanges;
    let ranges = 0;
    for (let index = 0; index < this.starts.length; index++) {
      const container = this.containers[index];
      ranges += container === null || container === undefined ? 1 : container.runCount;
      if (index > 0 && this.joinsPrevious(index)) ranges--;
    }
    this.cachedRanges = ranges;
    return ranges;
  }

  /** True when block index starts right where block index - 1 ends, so their runs form one range. */
  private joinsPrevious(index: number): boolean {
    if ((this.ends[index - 1] ?? 0) + 1 !== this.starts[index]) return false;
    const previous = this.containers[index - 1];
    const current = this.containers[index];
    const previousEndsFull = previous === null || previous === undefined || previous.lastOffset() === LAST_OFFSET;
    const currentStartsAtZero = current === null || current === undefined || current.firstOffset() === 0;
    return previousEndsFull && currentStartsAtZero;
  }

  firstEntry(): number {
    const container = this.containers[0];
    const base = (this.starts[0] ?? 0) * REGION_SIZE;
    return container === null || container === undefined ? base : base + container.firstOffset();
  }

  lastEntry(): number {
    const last = this.starts.length - 1;
    const container = this.containers[last];
    if (container === null || container === undefined) return ((this.ends[last] ?? 0) + 1) * REGION_SIZE - 1;
    return (this.starts[last] ?? 0) * REGION_SIZE + container.lastOffset();
  }

  /**
   * Visits blocks in order: (region, container) for a single region, or
   * (firstRegion, null, lastRegion) for a span of full regions. Encoders use
   * this to write a region's words without materialising runs.
   */
  forEachBlock(visit: (firstRegion: number, container: Container | null, lastRegion: number) => void): void {
    for (let index = 0; index < this.starts.length; index++) {
      visit(this.starts[index] ?? 0, this.containers[index] ?? null, this.ends[index] ?? 0);
    }
  }

  /**
   * Appends a region's container during decoding; regions must arrive in
   * ascending order. A full container becomes a full span.
   */
  appendContainer(region: number, container: Container): void {
    const last = this.starts.length - 1;
    if (last >= 0 && (this.ends[last] ?? 0) >= region) throw new RangeError('regions out of order');
    this.insertBlock(last + 1, region, region, container);
    this.changed(container.cardinality);
    this.normalize(last + 1);
  }

  clone(): LedgerAcks {
    const copy = new LedgerAcks();
    copy.starts = this.starts.slice();
    copy.ends = this.ends.slice();
    copy.containers = this.containers.map((container) => (container === null ? null : container.clone()));
    copy.total = this.total;
    copy.cachedRanges = this.cachedRanges;
    return copy;
  }

  memoryBytes(): number {
    let bytes = 96 + this.starts.length * 24;
    for (const container of this.containers) bytes += container === null ? 0 : container.memoryBytes();
    return bytes;
  }
}
