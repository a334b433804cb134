import type { Position } from '@ledgerline/cursor-codec';
import { LedgerlineError } from '@ledgerline/errors';
import { LedgerStoreReason, type LedgerStore } from '@ledgerline/ledger-store';
import type { EntryCache } from '../ledgers/entry-cache.js';
import type { ManagedLedgerEntry } from '../entry.js';
import { toManagedEntry } from '../ledgers/ledger-reads.js';
import { firstEntryAtOrAfter, type LedgerView } from '../ledgers/ledger-views.js';

/** What the reader tells its read-only view. */
export interface ReadOnlyReadEvents {
  /** The store has confirmed entries of `ledgerId` only up to `lac`: lower than the view may have learned. */
  storeConfirmed(ledgerId: number, lac: number): void;
  warn(error: unknown): void;
}

/**
 * The read path of a read-only view: entries straight from the ledger store
 * in pages, kept in the view's cache, never past what the store confirmed.
 */
export class ReadOnlyEntryReader {
  constructor(
    private readonly store: LedgerStore,
    private readonly cache: EntryCache,
    private readonly maxStoreReadEntries: number,
    private readonly events: ReadOnlyReadEvents,
  ) {}

  /** Up to `maxEntries` confirmed entries from `from` on, across `views`; [] when none is there yet. */
  async readEntries(views: readonly LedgerView[], from: Position, maxEntries: number): Promise<ManagedLedgerEntry[]> {
    const out: ManagedLedgerEntry[] = [];
    let next = firstEntryAtOrAfter(views, from);
    while (next !== undefined && out.length < maxEntries) {
      const ledgerId = next.ledgerId;
      const view = views.find((v) => v.ledgerId === ledgerId) as LedgerView;
      const last = Math.min(view.entries - 1, next.entryId + (maxEntries - out.length) - 1);
      const read = await this.readRange(view, next.entryId, last);
      out.push(...read);
      // Fewer than asked: the store has not confirmed the rest yet, and nothing after it may be read before it.
      if (read.length < last - next.entryId + 1) break;
      next = firstEntryAtOrAfter(views, { ledgerId, entryId: last + 1 });
    }
    return out;
  }

  /** Entries first..last of one ledger: from the cache where it has them, else from the store in pages. */
  private async readRange(view: LedgerView, first: number, last: number): Promise<ManagedLedgerEntry[]> {
    const out: ManagedLedgerEntry[] = [];
    for (let entryId = first; entryId <= last;) {
      const cached = this.cache.get({ ledgerId: view.ledgerId, entryId });
      if (cached !== undefined) {
        out.push(cached);
        entryId++;
        continue;
      }
      const pageLast = Math.min(last, entryId + this.maxStoreReadEntries - 1);
      const previous =
        entryId === 0
          ? view.firstOffset - 1
          : this.cache.get({ ledgerId: view.ledgerId, entryId: entryId - 1 })?.lastOffset;
      // An entry's first offset is the previous entry's index + 1: read that entry too when it is not known.
      const from = previous === undefined ? entryId - 1 : entryId;
      const stored = await this.readConfirmed(view.ledgerId, from, pageLast);
      if (stored === undefined) return out;
      let lastOffset = previous;
      for (const raw of stored) {
        const entry = toManagedEntry(view.ledgerId, raw, lastOffset);
        lastOffset = entry.lastOffset;
        if (raw.entryId < entryId) continue;
        this.cache.put(entry);
        out.push(entry);
      }
      entryId = pageLast + 1;
    }
    return out;
  }

  /**
   * Entries from..last of a ledger, or what the store has confirmed of them: a
   * LAC learned from a notification or from the writer is a hint, the store is
   * the truth. When the store refuses entries past its LAC, the view takes the
   * store's LAC for the ledger and reads up to it; undefined when even `from`
   * is not confirmed yet (the reader then waits, as at the end of the log).
   */
  private async readConfirmed(ledgerId: number, from: number, last: number) {
    try {
      return await this.store.read(ledgerId, from, last);
    } catch (error) {
      if (!(error instanceof LedgerlineError) || error.reason !== LedgerStoreReason.ENTRY_NOT_CONFIRMED) throw error;
      const confirmed = (await this.store.info(ledgerId))?.lastAddConfirmed ?? -1;
      this.events.storeConfirmed(ledgerId, confirmed);
      this.events.warn(error);
      if (confirmed < from) return undefined;
      return this.store.read(ledgerId, from, Math.min(last, confirmed));
    }
  }
}
