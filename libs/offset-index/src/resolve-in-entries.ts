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

/**
 * The times a reader is answered for the messages of an entry, in batch
 * order, from its payload (the bytes after the broker entry metadata) and its
 * broker timestamp. Supplied by the caller, which knows the message layout.
 */
export type MessageTimes = (payload: Uint8Array, brokerTimestampMs: number) => readonly number[];

/**
 * Walks the entries of `range` in order to the first message whose own time
 * is at or after `timestampMs`. An entry that carries its largest event time
 * is skipped without decoding when that is below the time, and otherwise has
 * its messages' times decoded (`messageTimes`); one without it counts all its
 * messages with its broker timestamp. A time of -1 (a Kafka record stored
 * without one) is below every time asked, so it never matches.
 */
export function scanForEventTime(
  range: EntryReadRange,
  entries: readonly StoredEntry[],
  timestampMs: number,
  messageTimes: MessageTimes,
): ScanResult {
  let entryFirstOffset = range.firstOffset;
  for (let position = 0; position < entries.length; position++) {
    const entry = entries[position] as StoredEntry;
    const metadata = entryMetadata(range, position, entry);
    const index = checkedIndex(range, entry, metadata, entryFirstOffset);
    if (metadata.brokerTimestamp === undefined) throw missingMetadata(range, entry, 'broker timestamp');
    const batchIndex = firstMessageAtOrAfter(
      range,
      entry,
      metadata,
      index - entryFirstOffset + 1,
      timestampMs,
      messageTimes,
    );
    if (batchIndex !== undefined) {
      return { position: atEntry(range.ledgerId, entry.entryId, batchIndex, entryFirstOffset + batchIndex) };
    }
    entryFirstOffset = index + 1;
  }
  return { nextFirstOffset: entryFirstOffset };
}

function firstMessageAtOrAfter(
  range: EntryReadRange,
  entry: StoredEntry,
  metadata: DecodedEntryMetadata,
  messageCount: number,
  timestampMs: number,
  messageTimes: MessageTimes,
): number | undefined {
  const brokerTimestamp = metadata.brokerTimestamp as number;
  if (metadata.maxEventTimeMs === undefined) return brokerTimestamp >= timestampMs ? 0 : undefined;
  if (metadata.maxEventTimeMs < timestampMs) return undefined;
  const times = messageTimes(decodeEntry(entry.data).payload, brokerTimestamp);
  if (times.length !== messageCount) {
    throw inconsistent(
      range,
      `entry ${entry.entryId} holds ${times.length} messages where its offsets say ${messageCount}`,
    );
  }
  const found = times.findIndex((time) => time >= timestampMs);
  return found < 0 ? undefined : found;
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
