import { comparePositions, type Position } from '@ledgerline/cursor-codec';
import type { ManagedLedgerEntry } from './entry.js';
import { positionKey } from './position.js';

/** Bookkeeping bytes counted per cached entry on top of its payload. */
const ENTRY_OVERHEAD_BYTES = 128;

/**
 * Recently appended and read entries, so tailing readers are served from
 * memory instead of the store. Bounded by bytes: the oldest inserted entry is
 * evicted first, which for a tailing workload is the one every reader has
 * already passed.
 */
export class EntryCache {
  private readonly entries = new Map<string, ManagedLedgerEntry>();
  private bytes = 0;
  hits = 0;
  misses = 0;

  constructor(private readonly maxBytes: number) {}

  get sizeBytes(): number {
    return this.bytes;
  }

  get count(): number {
    return this.entries.size;
  }

  put(entry: ManagedLedgerEntry): void {
    const cost = entrySize(entry);
    if (cost > this.maxBytes) return;
    const key = positionKey(entry.position);
    if (this.entries.has(key)) return;
    this.entries.set(key, entry);
    this.bytes += cost;
    this.evictToFit();
  }

  get(position: Position): ManagedLedgerEntry | undefined {
    const entry = this.entries.get(positionKey(position));
    if (entry === undefined) this.misses++;
    else this.hits++;
    return entry;
  }

  /** Drops every entry before `position` (everyone has read past it). */
  evictBefore(position: Position): void {
    for (const [key, entry] of this.entries) {
      if (comparePositions(entry.position, position) < 0) this.remove(key, entry);
    }
  }

  /** Drops every entry of a ledger (trimmed or given up). */
  evictLedger(ledgerId: number): void {
    for (const [key, entry] of this.entries) {
      if (entry.position.ledgerId === ledgerId) this.remove(key, entry);
    }
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  private evictToFit(): void {
    for (const [key, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) return;
      this.remove(key, entry);
    }
  }

  private remove(key: string, entry: ManagedLedgerEntry): void {
    this.entries.delete(key);
    this.bytes -= entrySize(entry);
  }
}

function entrySize(entry: ManagedLedgerEntry): number {
  return entry.payload.byteLength + ENTRY_OVERHEAD_BYTES;
}
