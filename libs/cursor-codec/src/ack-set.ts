import * as errors from './errors.js';
import { LedgerAcks } from './ledger-acks.js';
import type { Position } from './position.js';

// Module-local copies of imports used in hot loops: under the CommonJS interop
// this code runs with (tsx, Jest), every use of an imported binding is a getter call.
const { checkId, invalidPosition } = errors;

/** A maximal run of acknowledged entries in one ledger, both ends inclusive. */
export interface AckRange {
  ledgerId: number;
  firstEntryId: number;
  lastEntryId: number;
}

/** Receives one maximal range; returns false to stop the iteration. */
export type AckRangeVisitor = (ledgerId: number, firstEntryId: number, lastEntryId: number) => boolean | void;

/**
 * The individually acknowledged positions above a cursor's mark-delete
 * position, per ledger. Memory and time follow the number of holes, not the
 * span of the backlog: each ledger keeps run lists or bitmaps per 2^16-entry
 * region and whole acknowledged regions as spans (see ledger-acks.ts).
 */
export class AckSet {
  private readonly ledgers = new Map<number, LedgerAcks>();
  private sortedIds: number[] = [];
  private sorted = true;
  private total = 0;
  private rangeTotal = 0;
  /** Ledgers changed since rangeTotal was last brought up to date, with the count they contributed then. */
  private readonly staleRanges = new Map<number, number>();

  /** Builds a set from ranges in any order (overlaps are fine). */
  static fromRanges(ranges: Iterable<AckRange>): AckSet {
    const set = new AckSet();
    for (const range of ranges) set.addRange(range.ledgerId, range.firstEntryId, range.lastEntryId);
    return set;
  }

  /** Acknowledges one entry; returns true when it was not acknowledged before. */
  add(ledgerId: number, entryId: number): boolean {
    checkId(ledgerId, 'ledgerId');
    checkId(entryId, 'entryId');
    const ledger = this.ledgerFor(ledgerId);
    const added = ledger.add(entryId);
    if (added) this.total++;
    return added;
  }

  /** Acknowledges [firstEntryId, lastEntryId] (inclusive); returns how many entries were new. */
  addRange(ledgerId: number, firstEntryId: number, lastEntryId: number): number {
    checkId(ledgerId, 'ledgerId');
    checkId(firstEntryId, 'firstEntryId');
    checkId(lastEntryId, 'lastEntryId');
    if (lastEntryId < firstEntryId) {
      throw invalidPosition(`range ${ledgerId}:[${firstEntryId}, ${lastEntryId}] is reversed`);
    }
    const added = this.ledgerFor(ledgerId).addRange(firstEntryId, lastEntryId);
    this.total += added;
    return added;
  }

  has(ledgerId: number, entryId: number): boolean {
    checkId(ledgerId, 'ledgerId');
    checkId(entryId, 'entryId');
    const ledger = this.ledgers.get(ledgerId);
    return ledger !== undefined && ledger.has(entryId);
  }

  /**
   * Removes every acknowledged position at or before `position` (a new
   * mark-delete position); returns how many were removed. An entry id of -1
   * means "before the first entry of that ledger".
   */
  removeUpTo(position: Position): number {
    checkId(position.ledgerId, 'ledgerId');
    if (!Number.isSafeInteger(position.entryId) || position.entryId < -1) {
      throw invalidPosition(`entryId must be a safe integer >= -1, got ${String(position.entryId)}`);
    }
    const ids = this.ledgerIds();
    let removed = 0;
    let dropped = 0;
    for (const id of ids) {
      if (id > position.ledgerId) break;
      const ledger = this.ledgers.get(id);
      if (ledger === undefined) continue;
      if (id < position.ledgerId) {
        removed += ledger.size;
        this.forget(id, ledger);
        dropped++;
        continue;
      }
      if (position.entryId >= 0) {
        this.markStale(id, ledger);
        removed += ledger.removeUpTo(position.entryId);
        if (ledger.isEmpty()) {
          this.forget(id, ledger);
          dropped++;
        }
      }
    }
    this.sortedIds.splice(0, dropped);
    this.total -= removed;
    return removed;
  }

  /** Maximal ranges in ascending (ledgerId, entryId) order. */
  *ranges(): IterableIterator<AckRange> {
    for (const ledgerId of this.ledgerIds()) {
      const collected: AckRange[] = [];
      // Collect one ledger at a time so the generator never holds more than one ledger's ranges.
      this.ledgers.get(ledgerId)?.forEachRun((firstEntryId, lastEntryId) => {
        collected.push({ ledgerId, firstEntryId, lastEntryId });
        return true;
      });
      yield* collected;
    }
  }

  /** Visits maximal ranges in ascending order without allocating; the visitor may return false to stop. */
  forEachRange(visit: AckRangeVisitor): void {
    this.forEachRangeFrom(0, visit);
  }

  /**
   * As forEachRange, from the first ledger at or after `fromLedgerId`: the
   * ledgers before it are passed over by binary search, their runs never
   * visited (a page of ranges from a position costs what it reads).
   */
  forEachRangeFrom(fromLedgerId: number, visit: AckRangeVisitor): void {
    const ids = this.ledgerIds();
    let low = 0;
    let high = ids.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (ids[middle]! < fromLedgerId) low = middle + 1;
      else high = middle;
    }
    for (let index = low; index < ids.length; index++) {
      const ledgerId = ids[index]!;
      const completed = this.ledgers.get(ledgerId)?.forEachRun((first, last) => visit(ledgerId, first, last) !== false);
      if (completed === false) return;
    }
  }

  /** Number of maximal ranges (the number of holes they leave, give or take one). */
  rangeCount(): number {
    for (const [id, counted] of this.staleRanges) {
      const ledger = this.ledgers.get(id);
      this.rangeTotal += (ledger === undefined ? 0 : ledger.rangeCount()) - counted;
    }
    this.staleRanges.clear();
    return this.rangeTotal;
  }

  /** Number of acknowledged entries. */
  size(): number {
    return this.total;
  }

  isEmpty(): boolean {
    return this.total === 0;
  }

  /** Ledger ids holding acknowledged entries, ascending. */
  ledgerIds(): readonly number[] {
    if (!this.sorted) {
      this.sortedIds = [...this.ledgers.keys()].sort((a, b) => a - b);
      this.sorted = true;
    }
    return this.sortedIds;
  }

  /** The lowest acknowledged position, or undefined when empty. */
  first(): Position | undefined {
    const ledgerId = this.ledgerIds()[0];
    if (ledgerId === undefined) return undefined;
    const ledger = this.ledgers.get(ledgerId);
    return ledger === undefined ? undefined : { ledgerId, entryId: ledger.firstEntry() };
  }

  /** The highest acknowledged position, or undefined when empty. */
  last(): Position | undefined {
    const ids = this.ledgerIds();
    const ledgerId = ids[ids.length - 1];
    if (ledgerId === undefined) return undefined;
    const ledger = this.ledgers.get(ledgerId);
    return ledger === undefined ? undefined : { ledgerId, entryId: ledger.lastEntry() };
  }

  clone(): AckSet {
    const copy = new AckSet();
    for (const id of this.ledgerIds()) {
      const ledger = this.ledgers.get(id);
      if (ledger !== undefined) copy.ledgers.set(id, ledger.clone());
    }
    copy.sortedIds = this.sortedIds.slice();
    copy.total = this.total;
    copy.rangeTotal = this.rangeCount();
    return copy;
  }

  /** Adds every range of `other` to this set in place; returns how many entries were new. */
  addAll(other: AckSet): number {
    let added = 0;
    other.forEachRange((ledgerId, first, last) => {
      added += this.ledgerFor(ledgerId).addRange(first, last);
    });
    this.total += added;
    return added;
  }

  /** A new set holding the positions of both sets; neither input changes. */
  union(other: AckSet): AckSet {
    const result = this.clone();
    result.addAll(other);
    return result;
  }

  /** True when both sets hold exactly the same positions. */
  equals(other: AckSet): boolean {
    if (this.total !== other.total) return false;
    const ids = this.ledgerIds();
    const otherIds = other.ledgerIds();
    if (ids.length !== otherIds.length) return false;
    for (let index = 0; index < ids.length; index++) {
      const id = ids[index] ?? -1;
      if (otherIds[index] !== id) return false;
      const mine: number[] = [];
      this.ledgers.get(id)?.forEachRun((first, last) => mine.push(first, last) > 0);
      let at = 0;
      const same = other.ledgers.get(id)?.forEachRun((first, last) => {
        const matches = mine[at] === first && mine[at + 1] === last;
        at += 2;
        return matches;
      });
      if (same !== true || at !== mine.length) return false;
    }
    return true;
  }

  /**
   * The first `maxRanges` ranges, and how many ranges were left out.
   * Encoders use it to apply maxRangesToPersist. This set never changes: when
   * nothing is cut, `kept` is this set itself, otherwise a new one.
   */
  keepFirstRanges(maxRanges: number): { kept: AckSet; dropped: number } {
    const total = this.rangeCount();
    if (total <= maxRanges) return { kept: this, dropped: 0 };
    const kept = new AckSet();
    if (maxRanges === 0) return { kept, dropped: total };
    let seen = 0;
    let boundary: Position = { ledgerId: 0, entryId: 0 };
    this.forEachRange((ledgerId, _first, last) => {
      seen++;
      boundary = { ledgerId, entryId: last };
      return seen < maxRanges;
    });
    for (const id of this.ledgerIds()) {
      if (id > boundary.ledgerId) break;
      const ledger = this.ledgers.get(id)?.clone();
      if (ledger === undefined) continue;
      if (id === boundary.ledgerId) ledger.removeAfter(boundary.entryId);
      kept.adoptLedger(id, ledger);
    }
    return { kept, dropped: total - maxRanges };
  }

  /** Approximate bytes held by the containers, for metrics; the bench measures the real heap. */
  memoryBytes(): number {
    let bytes = 128 + this.sortedIds.length * 8;
    for (const ledger of this.ledgers.values()) bytes += ledger.memoryBytes();
    return bytes;
  }

  /** The ledger's container list, creating it when absent; marks its range count stale. */
  private ledgerFor(ledgerId: number): LedgerAcks {
    let ledger = this.ledgers.get(ledgerId);
    if (ledger === undefined) {
      ledger = new LedgerAcks();
      this.ledgers.set(ledgerId, ledger);
      const lastId = this.sortedIds[this.sortedIds.length - 1];
      if (this.sorted && (lastId === undefined || lastId < ledgerId)) this.sortedIds.push(ledgerId);
      else this.sorted = false;
    }
    this.markStale(ledgerId, ledger);
    return ledger;
  }

  private markStale(ledgerId: number, ledger: LedgerAcks): void {
    if (!this.staleRanges.has(ledgerId)) this.staleRanges.set(ledgerId, ledger.isEmpty() ? 0 : ledger.rangeCount());
  }

  private forget(ledgerId: number, ledger: LedgerAcks): void {
    this.markStale(ledgerId, ledger);
    this.ledgers.delete(ledgerId);
  }

  /** @internal The codecs in this package read ledgers directly. */
  ledger(ledgerId: number): LedgerAcks | undefined {
    return this.ledgers.get(ledgerId);
  }

  /** @internal The decoders hand over ledgers they built. */
  adoptLedger(ledgerId: number, ledger: LedgerAcks): void {
    if (ledger.isEmpty()) return;
    if (this.ledgers.has(ledgerId)) throw new RangeError(`ledger ${ledgerId} adopted twice`);
    this.ledgers.set(ledgerId, ledger);
    const lastId = this.sortedIds[this.sortedIds.length - 1];
    if (this.sorted && (lastId === undefined || lastId < ledgerId)) this.sortedIds.push(ledgerId);
    else this.sorted = false;
    this.total += ledger.size;
    this.staleRanges.set(ledgerId, 0);
  }
}
