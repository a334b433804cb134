import { LedgerlineError } from '@ledgerline/errors';
import { decodeEntry, type DecodedEntryMetadata } from './entry-framing.js';
import type { EntryReadRange, MessagePosition, StoredEntry } from './positions.js';
import { OffsetIndexReason } from './errors.js';

/** The outcome of scanning part of a range: the position, or where the next part starts. */
export type ScanResult = { position: MessagePosition } | { position?: undefined; nextFirstOffset: number };

/**
 * The exact position of `offset` in the entries that the range read of
 * `range` returned. DATA_LOSS when the entries do not hold it, which means the
 * index and the ledger disagree.
 */
export function resolveOffsetInEntries(
  range: EntryReadRange,
  entries: readonly StoredEntry[],
  offset: number,
): MessagePosition {
  return found(scanForOffset(range, entries, offset), range, offset);
}

/** The first message whose broker timestamp is >= `timestampMs` in the entries the range read returned. */
export function resolveTimeInEntries(
  range: EntryReadRange,
  entries: readonly StoredEntry[],
  timestampMs: number,
): MessagePosition {
  return found(scanForTime(range, entries, timestampMs), range, timestampMs);
}

/**
 * Finds the entry of `range` that holds `offset` by bisecting on the entries'
 * indexes (they ascend), so only about log2(range) entries are decoded. An
 * entry's first offset is the previous entry's index + 1, or range.firstOffset
 * for the first entry of the range.
 */
export function scanForOffset(range: EntryReadRange, entries: readonly StoredEntry[], offset: number): ScanResult {
  if (entries.length === 0) return { nextFirstOffset: range.firstOffset };
  const indexAt = (position: number) => entryIndex(range, position, entries[position] as StoredEntry);
  const lastIndex = indexAt(entries.length - 1);
  if (lastIndex < offset) return { nextFirstOffset: lastIndex + 1 };
  let low = 0;
  let high = entries.length - 1;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (indexAt(middle) >= offset) high = middle;
    else low = middle + 1;
  }
  const entryFirstOffset = low === 0 ? range.firstOffset : indexAt(low - 1) + 1;
  const entry = entries[low] as StoredEntry;
  if (offset < entryFirstOffset || indexAt(low) < entryFirstOffset) {
    throw inconsistent(range, `entry ${entry.entryId} does not hold offset ${offset}`);
  }
  return { position: atEntry(range.ledgerId, entry.entryId, offset - entryFirstOffset, offset) };
}

/** Walks the entries of `range` in order until one has a broker timestamp at or after `timestampMs`. */
export function scanForTime(range: EntryReadRange, entries: readonly StoredEntry[], timestampMs: number): ScanResult {
  let entryFirstOffset = range.firstOffset;
  for (let position = 0; position < entries.length; position++) {
    const entry = entries[position] as StoredEntry;
    const metadata = entryMetadata(range, position, entry);
    const index = checkedIndex(range, entry, metadata, entryFirstOffset);
    if (metadata.brokerTimestamp === undefined) throw missingMetadata(range, entry, 'broker timestamp');
    if (metadata.brokerTimestamp >= timestampMs) {
      return { position: atEntry(range.ledgerId, entry.entryId, 0, entryFirstOffset) };
    }
    entryFirstOffset = index + 1;
  }
  return { nextFirstOffset: entryFirstOffset };
}

function entryIndex(range: EntryReadRange, position: number, entry: StoredEntry): number {
  const index = entryMetadata(range, position, entry).index;
  if (index === undefined) throw missingMetadata(range, entry, 'index');
  return index;
}

function entryMetadata(range: EntryReadRange, position: number, entry: StoredEntry): DecodedEntryMetadata {
  if (entry?.entryId !== range.firstEntryId + position) {
    throw new LedgerlineError(
      'DATA_LOSS',
      OffsetIndexReason.UNEXPECTED_ENTRY,
      `reading ledger ${range.ledgerId} returned entry ${String(entry?.entryId)} where ${range.firstEntryId + position} was expected`,
    );
  }
  const { metadata } = decodeEntry(entry.data);
  if (metadata === undefined) throw missingMetadata(range, entry, 'broker entry metadata');
  return metadata;
}

function checkedIndex(
  range: EntryReadRange,
  entry: StoredEntry,
  metadata: DecodedEntryMetadata,
  entryFirstOffset: number,
): number {
  if (metadata.index === undefined) throw missingMetadata(range, entry, 'index');
  if (metadata.index < entryFirstOffset) {
    throw inconsistent(range, `entry ${entry.entryId} ends at offset ${metadata.index}, before ${entryFirstOffset}`);
  }
  return metadata.index;
}

function found(result: ScanResult, range: EntryReadRange, target: number): MessagePosition {
  if (result.position !== undefined) return result.position;
  throw inconsistent(range, `entries ${range.firstEntryId}..${range.lastEntryId} do not hold ${target}`);
}

function atEntry(ledgerId: number, entryId: number, batchIndex: number, offset: number): MessagePosition {
  return { ledgerId, entryId, batchIndex, offset, beforeEarliest: false, pastEnd: false };
}

function missingMetadata(range: EntryReadRange, entry: StoredEntry, what: string) {
  return new LedgerlineError(
    'DATA_LOSS',
    OffsetIndexReason.ENTRY_WITHOUT_OFFSET,
    `entry ${entry.entryId} of ledger ${range.ledgerId} carries no ${what}, so it cannot be found by offset or time`,
  );
}

function inconsistent(range: EntryReadRange, detail: string) {
  return new LedgerlineError(
    'DATA_LOSS',
    OffsetIndexReason.OFFSET_INDEX_INCONSISTENT,
    `the offset index of ledger ${range.ledgerId} disagrees with its entries: ${detail}`,
    { details: { ledgerId: String(range.ledgerId) } },
  );
}
