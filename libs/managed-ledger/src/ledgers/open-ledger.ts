import type { LedgerWriter } from '@ledgerline/ledger-store';
import { LedgerOffsetIndex } from '@ledgerline/offset-index';
import { EntryOffsetTable } from './entry-offset-table.js';
import { ENTRY_COUNTS_PROPERTY, type LedgerSummary } from '@ledgerline/ledger-info';

export interface IndexSpacing {
  entriesPerPoint: number;
  bytesPerPoint: number;
}

/**
 * The ledger the managed ledger is writing: its writer and everything it
 * learns as entries are confirmed, so that closing it needs no storage read.
 */
export class OpenLedger {
  entries = 0;
  sizeBytes = 0;
  /** Set once the ledger is sealed in the store (closed or fenced and closed by us). */
  sealed = false;
  /** Set when a write failed: the ledger must be fenced and checked before anything else. */
  writeFailed = false;
  readonly index: LedgerOffsetIndex;
  readonly offsets: EntryOffsetTable;

  constructor(
    readonly writer: LedgerWriter,
    readonly firstOffset: number,
    readonly createdAtMs: number,
    spacing: IndexSpacing,
  ) {
    this.index = new LedgerOffsetIndex({ firstOffset, ...spacing });
    this.offsets = new EntryOffsetTable(firstOffset);
  }

  get ledgerId(): number {
    return this.writer.ledgerId;
  }

  get lastOffset(): number {
    return this.offsets.lastOffset;
  }

  /** The id of the last confirmed entry; -1 while none is. */
  get lastEntryId(): number {
    return this.entries - 1;
  }

  /** Records an entry the store confirmed at id `entries`. */
  confirm(index: number, brokerTimestampMs: number, sizeBytes: number, maxEventTimeMs?: number): void {
    this.index.append(index, brokerTimestampMs, sizeBytes, maxEventTimeMs);
    this.offsets.append(index);
    this.entries++;
    this.sizeBytes += sizeBytes;
  }

  /** The LedgerInfo of this ledger once sealed. */
  closedSummary(closedAtMs: number, maxStoredEntryCountsBytes: number): LedgerSummary {
    return summarizeClosedLedger(
      this.ledgerId,
      this.index,
      this.offsets,
      this.sizeBytes,
      closedAtMs,
      maxStoredEntryCountsBytes,
    );
  }

  /** The LedgerInfo written while the ledger is open: what is known before any entry. */
  openSummary(): LedgerSummary {
    return { ledgerId: this.ledgerId, entries: 0, sizeBytes: 0, firstOffset: this.firstOffset, properties: new Map() };
  }
}

/** The LedgerInfo of a sealed ledger, from its index and offsets (built while writing or by a scan). */
export function summarizeClosedLedger(
  ledgerId: number,
  index: LedgerOffsetIndex,
  offsets: EntryOffsetTable,
  sizeBytes: number,
  closedAtMs: number,
  maxStoredEntryCountsBytes: number,
): LedgerSummary {
  const summary: LedgerSummary = {
    ledgerId,
    entries: index.entryCount,
    sizeBytes,
    closedAtMs,
    firstOffset: index.firstOffset,
    lastOffset: index.lastOffset,
    properties: new Map(),
  };
  if (index.entryCount > 0) {
    summary.minBrokerTimestampMs = index.minTimestamp;
    summary.maxBrokerTimestampMs = index.maxTimestamp;
    summary.maxEventTimeMs = index.maxEventTime;
    summary.offsetIndex = index.serialize();
    const counts = offsets.encode();
    if (counts.length <= maxStoredEntryCountsBytes) {
      summary.properties.set(ENTRY_COUNTS_PROPERTY, Buffer.from(counts).toString('base64'));
    }
  }
  return summary;
}
