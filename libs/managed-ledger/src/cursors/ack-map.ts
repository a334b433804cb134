/**
 * The ack-hole map of a subscription: the entries after its mark-delete
 * position, up to the topic's last entry, laid end to end across the topic's
 * ledgers and cut into at most `cells` equal slices, each with how many of its
 * entries are acknowledged. Pure, and linear in ranges + cells + ledgers, so
 * a million holes cost a million small steps and the answer stays `cells` long.
 */

import type { AckSet } from '@ledgerline/cursor-codec';
import type { ExportedCursorState } from './ack-delta.js';

export interface MapPosition {
  ledgerId: number;
  entryId: number;
}

export interface MapLedger {
  ledgerId: number;
  entries: number;
  firstOffset: number;
  lastOffset: number;
}

export interface MapRange {
  ledgerId: number;
  firstEntryId: number;
  lastEntryId: number;
}

export interface MapCell {
  first: MapPosition;
  last: MapPosition;
  entries: number;
  ackedEntries: number;
  ranges: number;
  /** -1 when the cell's ends have no known offset (a ledger of batch entries). */
  firstOffset: number;
  lastOffset: number;
}

export interface AckMapResult {
  spanFirst: MapPosition | undefined;
  spanLast: MapPosition | undefined;
  spanEntries: number;
  cells: MapCell[];
  ackedRanges: number;
  ackedEntries: number;
  unplacedRanges: number;
}

/** Where each ledger starts when the topic's entries are laid end to end. */
class EntryLine {
  readonly starts: number[] = [];
  readonly byId = new Map<number, number>();
  readonly total: number;

  constructor(readonly ledgers: readonly MapLedger[]) {
    let start = 0;
    ledgers.forEach((ledger, index) => {
      this.starts.push(start);
      this.byId.set(ledger.ledgerId, index);
      start += ledger.entries;
    });
    this.total = start;
  }

  #lastLedgerId = -1;
  #lastStart: number | undefined;

  /** The index on the line of an entry of a listed ledger; undefined for a ledger not listed. */
  indexOf(ledgerId: number, entryId: number): number | undefined {
    // Ranges come in position order, many to a ledger: the last ledger's start is usually the one asked for.
    if (ledgerId !== this.#lastLedgerId) {
      const ledger = this.byId.get(ledgerId);
      this.#lastLedgerId = ledgerId;
      this.#lastStart = ledger === undefined ? undefined : this.starts[ledger];
    }
    return this.#lastStart === undefined ? undefined : this.#lastStart + entryId;
  }

  /** The first line index after the mark-delete position (0 when it is before every listed ledger). */
  firstAfter(markDelete: MapPosition): number {
    const exact = this.indexOf(markDelete.ledgerId, markDelete.entryId);
    if (exact !== undefined) return exact + 1;
    const later = this.ledgers.findIndex((ledger) => ledger.ledgerId > markDelete.ledgerId);
    return later === -1 ? this.total : this.starts[later]!;
  }

  #ledgerAt(index: number): number {
    let low = 0;
    let high = this.ledgers.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.starts[middle]! <= index) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  position(index: number): MapPosition {
    const ledger = this.#ledgerAt(index);
    return { ledgerId: this.ledgers[ledger]!.ledgerId, entryId: index - this.starts[ledger]! };
  }

  /** An entry's offset when its ledger holds one message per entry; -1 otherwise. */
  offset(index: number): number {
    const ledger = this.#ledgerAt(index);
    const { entries, firstOffset, lastOffset } = this.ledgers[ledger]!;
    if (lastOffset - firstOffset + 1 !== entries) return -1;
    return firstOffset + index - this.starts[ledger]!;
  }
}

function emptyCells(line: EntryLine, spanStart: number, spanEntries: number, cellSize: number): MapCell[] {
  const count = Math.ceil(spanEntries / cellSize);
  return Array.from({ length: count }, (_, cell) => {
    const first = spanStart + cell * cellSize;
    const last = Math.min(first + cellSize, spanStart + spanEntries) - 1;
    return {
      first: line.position(first),
      last: line.position(last),
      entries: last - first + 1,
      ackedEntries: 0,
      ranges: 0,
      firstOffset: line.offset(first),
      lastOffset: line.offset(last),
    };
  });
}

/** Visits acknowledged ranges in position order (AckSet.forEachRange's shape): no object per range. */
export type RangeSource = (visit: (ledgerId: number, firstEntryId: number, lastEntryId: number) => void) => void;

/** A RangeSource over an array of ranges. */
export function rangesOf(ranges: readonly MapRange[]): RangeSource {
  return (visit) => {
    for (const range of ranges) visit(range.ledgerId, range.firstEntryId, range.lastEntryId);
  };
}

/**
 * Builds the map; `ranges` visits the cursor's acknowledged ranges once,
 * without an object per range: a million ranges are a million calls.
 */
export function buildAckMap(
  ledgers: readonly MapLedger[],
  markDelete: MapPosition,
  ranges: RangeSource,
  cells: number,
): AckMapResult {
  const line = new EntryLine(ledgers);
  const spanStart = line.firstAfter(markDelete);
  const spanEntries = Math.max(0, line.total - spanStart);
  const cellSize = Math.max(1, Math.ceil(spanEntries / cells));
  const result: AckMapResult = {
    spanFirst: spanEntries === 0 ? undefined : line.position(spanStart),
    spanLast: spanEntries === 0 ? undefined : line.position(line.total - 1),
    spanEntries,
    cells: emptyCells(line, spanStart, spanEntries, cellSize),
    ackedRanges: 0,
    ackedEntries: 0,
    unplacedRanges: 0,
  };
  ranges((ledgerId, firstEntryId, lastEntryId) => {
    result.ackedRanges++;
    const first = line.indexOf(ledgerId, firstEntryId);
    const last = line.indexOf(ledgerId, lastEntryId);
    if (first === undefined || last === undefined) {
      result.unplacedRanges++;
      return;
    }
    const from = Math.max(first, spanStart);
    const to = Math.min(last, line.total - 1);
    if (from > to) return;
    result.ackedEntries += to - from + 1;
    for (let cell = Math.floor((from - spanStart) / cellSize); cell * cellSize + spanStart <= to; cell++) {
      const cellFirst = spanStart + cell * cellSize;
      const overlap = Math.min(to, cellFirst + cellSize - 1) - Math.max(from, cellFirst) + 1;
      result.cells[cell]!.ackedEntries += overlap;
      result.cells[cell]!.ranges++;
    }
  });
  return result;
}

/**
 * A cursor of any size, without its ranges (PIP-381: a million holes do not
 * fit one message): what it is, and its ack map over the span after mark-delete.
 */
export interface CursorSummary extends Omit<ExportedCursorState, 'ackedRanges' | 'batchAcks'> {
  ackMap: AckMapResult;
  /** Entries with some, not all, of their batch indexes acknowledged. */
  partiallyAckedBatches: number;
}

/** A page of a cursor's acknowledged ranges. */
export interface AckedRangesPage {
  ranges: MapRange[];
  /** More ranges follow the page's last. */
  more: boolean;
}

/**
 * Up to `limit` ranges of `acked` in position order, from the first that
 * ends at or after `from` (every range when it is absent). A page starts by
 * position, not by index, so pages stay right while acks change between them.
 */
export function ackedRangesPage(acked: AckSet, from: MapPosition | undefined, limit: number): AckedRangesPage {
  const ranges: MapRange[] = [];
  let more = false;
  acked.forEachRangeFrom(from?.ledgerId ?? 0, (ledgerId, firstEntryId, lastEntryId) => {
    // Earlier ledgers are skipped by the AckSet; within the first one, ranges ending before `from` are passed.
    if (from !== undefined && ledgerId === from.ledgerId && lastEntryId < from.entryId) return true;
    if (ranges.length === limit) {
      more = true;
      return false;
    }
    ranges.push({ ledgerId, firstEntryId, lastEntryId });
    return true;
  });
  return { ranges, more };
}
