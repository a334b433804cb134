import { comparePositions, type Position } from '@ledgerline/cursor-codec';
import type { LedgerSummary } from '@ledgerline/ledger-info';
import type { OpenLedger } from './open-ledger.js';

/** A ledger as readers see it: for the open ledger, what is confirmed so far. */
export interface LedgerView {
  ledgerId: number;
  entries: number;
  firstOffset: number;
  lastOffset: number;
  sizeBytes: number;
  /** True for the ledger being written (its entry count still grows). */
  open: boolean;
  closedAtMs?: number;
  /** The range of the ledger's broker timestamps, recorded when it closes. */
  minBrokerTimestampMs?: number;
  maxBrokerTimestampMs?: number;
}

/** The ledgers of a managed ledger, oldest first, with the open one's live counts. */
export function ledgerViews(ledgers: readonly LedgerSummary[], current: OpenLedger | undefined): LedgerView[] {
  return ledgers.map((l) => {
    if (current !== undefined && l.ledgerId === current.ledgerId) {
      // The open ledger, or one sealed but not yet recorded: either way the counts come from memory,
      // which is what the store holds.
      return {
        ledgerId: l.ledgerId,
        entries: current.entries,
        firstOffset: current.firstOffset,
        lastOffset: current.lastOffset,
        sizeBytes: current.sizeBytes,
        open: !current.sealed,
      };
    }
    const view: LedgerView = {
      ledgerId: l.ledgerId,
      entries: l.entries,
      firstOffset: l.firstOffset,
      lastOffset: l.lastOffset ?? l.firstOffset - 1,
      sizeBytes: l.sizeBytes,
      open: l.closedAtMs === undefined,
    };
    if (l.closedAtMs !== undefined) view.closedAtMs = l.closedAtMs;
    if (l.minBrokerTimestampMs !== undefined) view.minBrokerTimestampMs = l.minBrokerTimestampMs;
    if (l.maxBrokerTimestampMs !== undefined) view.maxBrokerTimestampMs = l.maxBrokerTimestampMs;
    return view;
  });
}

/**
 * The bytes of a managed ledger's entries, the sum of its views' sizeBytes,
 * without building the views: an owner's load report asks it of every topic
 * it holds each interval, and an owner may hold thousands. The closed
 * ledgers' sum is kept for the ledger list it was taken over; the info keeper
 * replaces that list on every update (a ledger added, closed or trimmed) and
 * never changes it in place, so a call is O(1) between such updates and one
 * pass over the list after each. The open ledger's bytes are read live.
 */
export class StoredBytes {
  private summed: readonly LedgerSummary[] | undefined;
  private summedWith: OpenLedger | undefined;
  private closedBytes = 0;
  private currentListed = false;

  of(ledgers: readonly LedgerSummary[], current: OpenLedger | undefined): number {
    if (ledgers !== this.summed || current !== this.summedWith) {
      let closedBytes = 0;
      let currentListed = false;
      for (const ledger of ledgers) {
        // As in ledgerViews: the listed ledger the owner is writing counts from memory.
        if (current !== undefined && ledger.ledgerId === current.ledgerId) currentListed = true;
        else closedBytes += ledger.sizeBytes;
      }
      this.summed = ledgers;
      this.summedWith = current;
      this.closedBytes = closedBytes;
      this.currentListed = currentListed;
    }
    return this.closedBytes + (this.currentListed && current !== undefined ? current.sizeBytes : 0);
  }
}

/** The index of the first ledger whose id is at least `ledgerId`; views.length when none. */
export function ledgerIndexAtOrAfter(views: readonly LedgerView[], ledgerId: number): number {
  let low = 0;
  let high = views.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((views[middle] as LedgerView).ledgerId < ledgerId) low = middle + 1;
    else high = middle;
  }
  return low;
}

export function findLedger(views: readonly LedgerView[], ledgerId: number): LedgerView | undefined {
  const view = views[ledgerIndexAtOrAfter(views, ledgerId)];
  return view?.ledgerId === ledgerId ? view : undefined;
}

/**
 * The first stored entry at or after `p`, skipping empty and missing
 * ledgers; undefined when there is none yet.
 */
export function firstEntryAtOrAfter(views: readonly LedgerView[], p: Position): Position | undefined {
  let index = ledgerIndexAtOrAfter(views, p.ledgerId);
  let entryId = views[index]?.ledgerId === p.ledgerId ? Math.max(p.entryId, 0) : 0;
  for (; index < views.length; index++, entryId = 0) {
    const view = views[index] as LedgerView;
    if (entryId < view.entries) return { ledgerId: view.ledgerId, entryId };
  }
  return undefined;
}

/** The position right after `p`, where a reader that consumed `p` goes next. */
export function positionAfter(views: readonly LedgerView[], p: Position): Position {
  const next = firstEntryAtOrAfter(views, { ledgerId: p.ledgerId, entryId: p.entryId + 1 });
  if (next !== undefined) return next;
  return endPosition(views) ?? { ledgerId: p.ledgerId, entryId: p.entryId + 1 };
}

/** The last stored entry, or undefined when no ledger holds one. */
export function lastEntry(views: readonly LedgerView[]): Position | undefined {
  for (let index = views.length - 1; index >= 0; index--) {
    const view = views[index] as LedgerView;
    if (view.entries > 0) return { ledgerId: view.ledgerId, entryId: view.entries - 1 };
  }
  return undefined;
}

/** Where the next entry will be written: after the last entry of the last ledger. */
export function endPosition(views: readonly LedgerView[]): Position | undefined {
  const last = views[views.length - 1];
  return last === undefined ? undefined : { ledgerId: last.ledgerId, entryId: last.entries };
}

/**
 * The one spelling of a mark-delete position: the last entry of a closed
 * ledger is written as "before the first entry" of the next ledger,
 * (next, -1), past empty ledgers, and a position in a removed ledger moves
 * to the next ledger that exists. Two cursors that acknowledged the same entries then
 * hold equal positions, which makes ack deltas commute.
 */
export function canonicalMarkDelete(views: readonly LedgerView[], p: Position): Position {
  let index = ledgerIndexAtOrAfter(views, p.ledgerId);
  let current = views[index]?.ledgerId === p.ledgerId ? p : undefined;
  if (current === undefined) {
    const next = views[index];
    return next === undefined ? p : { ledgerId: next.ledgerId, entryId: -1 };
  }
  for (;;) {
    const view = views[index] as LedgerView;
    const next = views[index + 1];
    if (view.open || next === undefined || current.entryId < view.entries - 1) return current;
    current = { ledgerId: next.ledgerId, entryId: -1 };
    index++;
  }
}

/** True when `p` names an entry that exists: a valid target for an acknowledgement. */
export function entryExists(views: readonly LedgerView[], p: Position): boolean {
  const view = findLedger(views, p.ledgerId);
  return view !== undefined && p.entryId >= 0 && p.entryId < view.entries;
}

/** The entries strictly after `from` up to and including `to`, counted over the ledgers. */
export function entriesBetween(views: readonly LedgerView[], from: Position, to: Position): number {
  if (comparePositions(to, from) <= 0) return 0;
  let total = 0;
  for (const view of views) {
    if (view.ledgerId < from.ledgerId || view.ledgerId > to.ledgerId) continue;
    const first = view.ledgerId === from.ledgerId ? from.entryId + 1 : 0;
    const last = view.ledgerId === to.ledgerId ? Math.min(to.entryId, view.entries - 1) : view.entries - 1;
    if (last >= first) total += last - first + 1;
  }
  return total;
}
