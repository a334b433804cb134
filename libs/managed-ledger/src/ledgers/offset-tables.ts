import type { LedgerStore } from '@ledgerline/ledger-store';
import { decodeEntry } from '@ledgerline/offset-index';
import { LedgerlineError } from '@ledgerline/errors';
import { EntryOffsetTable } from './entry-offset-table.js';
import { ENTRY_COUNTS_PROPERTY, type LedgerSummary } from '@ledgerline/ledger-info';
import { ManagedLedgerReason } from '../reasons.js';

/** Entries per read when a ledger's offsets must be rebuilt from its entries. */
const SCAN_PAGE_ENTRIES = 256;

/**
 * Per-entry offsets of closed ledgers, kept for the most recently used
 * `maxTables` ledgers. A table comes from the ledger's LedgerInfo when it was
 * small enough to store there, else from one scan of the ledger.
 */
export class OffsetTables {
  private readonly tables = new Map<number, EntryOffsetTable>();

  constructor(
    private readonly store: LedgerStore,
    private readonly maxTables: number,
  ) {}

  /** The table of a sealed ledger, if already in memory. */
  peek(ledgerId: number): EntryOffsetTable | undefined {
    return this.tables.get(ledgerId);
  }

  remember(ledgerId: number, table: EntryOffsetTable): void {
    this.tables.delete(ledgerId);
    this.tables.set(ledgerId, table);
    for (const oldest of this.tables.keys()) {
      if (this.tables.size <= this.maxTables) break;
      this.tables.delete(oldest);
    }
  }

  forget(ledgerId: number): void {
    this.tables.delete(ledgerId);
  }

  async load(summary: LedgerSummary): Promise<EntryOffsetTable> {
    const known = this.tables.get(summary.ledgerId);
    if (known !== undefined) {
      this.remember(summary.ledgerId, known);
      return known;
    }
    const stored = summary.properties.get(ENTRY_COUNTS_PROPERTY);
    const table =
      stored !== undefined
        ? EntryOffsetTable.decode(Buffer.from(stored, 'base64'), summary.firstOffset)
        : await scanOffsets(this.store, summary.ledgerId, summary.entries, summary.firstOffset);
    this.remember(summary.ledgerId, table);
    return table;
  }
}

/** Reads a ledger's entries 0..entries-1 in pages and records each entry's offset. */
export async function scanOffsets(
  store: LedgerStore,
  ledgerId: number,
  entries: number,
  firstOffset: number,
): Promise<EntryOffsetTable> {
  const table = new EntryOffsetTable(firstOffset);
  for (let first = 0; first < entries; first += SCAN_PAGE_ENTRIES) {
    const last = Math.min(entries - 1, first + SCAN_PAGE_ENTRIES - 1);
    for (const entry of await store.read(ledgerId, first, last)) {
      const index = decodeEntry(entry.data).metadata?.index;
      if (index === undefined) {
        throw new LedgerlineError(
          'DATA_LOSS',
          ManagedLedgerReason.ENTRY_METADATA_MISSING,
          `entry ${entry.entryId} of ledger ${ledgerId} has no offset`,
        );
      }
      table.append(index);
    }
  }
  return table;
}
