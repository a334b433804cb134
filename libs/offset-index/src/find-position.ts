import { LedgerlineError } from '@ledgerline/errors';
import { checkIntegerIn } from './index-options.js';
import { DEFAULT_MAX_READ_ENTRIES, MAX_READ_ENTRIES_LIMIT } from './limits.js';
import type { EntryReadRange, EntryReader, Location, MessagePosition, StoredEntry } from './positions.js';
import {
  scanForEventTime,
  scanForOffset,
  scanForTime,
  type MessageTimes,
  type ScanResult,
} from './resolve-in-entries.js';
import type { TopicOffsetIndex } from './topic-offset-index.js';
import { OffsetIndexReason } from './errors.js';

export interface FindPositionOptions {
  /**
   * The most entries one read may fetch (default 10,000, at most 100,000).
   * Only a ledger without an index can need more than one read; an indexed
   * ledger's range is never wider than its entriesPerPoint.
   */
  maxReadEntries?: number;
}

/**
 * The position of the message with `offset`: at most one range read for a
 * ledger with an index, none when the index alone knows the answer.
 */
export async function findPositionByOffset(
  index: TopicOffsetIndex,
  reader: EntryReader,
  offset: number,
  options?: FindPositionOptions,
): Promise<MessagePosition> {
  const location = index.locateOffset(offset);
  return finish(location, reader, options, (range, entries) => scanForOffset(range, entries, offset));
}

/** The position of the first message whose broker timestamp is >= `timestampMs`, with at most one range read. */
export async function findPositionByTime(
  index: TopicOffsetIndex,
  reader: EntryReader,
  timestampMs: number,
  options?: FindPositionOptions,
): Promise<MessagePosition> {
  const location = index.locateTime(timestampMs);
  return finish(location, reader, options, (range, entries) => scanForTime(range, entries, timestampMs));
}

/**
 * The position of the first message whose own time (event time, as a reader
 * is answered it; `messageTimes` decodes an entry's) is >= `timestampMs`:
 * Kafka's lookup on a CreateTime topic. The index's running maximum of each
 * entry's largest event time locates the entry, with at most one range read
 * for an indexed ledger, and only the entries in that range that may reach the
 * time are decoded. Entries stored without their largest event time count
 * with their broker timestamp, as findPositionByTime does.
 */
export async function findPositionByEventTime(
  index: TopicOffsetIndex,
  reader: EntryReader,
  timestampMs: number,
  messageTimes: MessageTimes,
  options?: FindPositionOptions,
): Promise<MessagePosition> {
  const scan: Scan = (range, entries) => scanForEventTime(range, entries, timestampMs, messageTimes);
  let location = index.locateEventTime(timestampMs);
  // An entry's largest event time is its publisher's word: one that overstates its messages' leaves the located
  // range without an answer, and the scan goes on past it rather than fail, for a bounded number of ranges: one
  // lookup must not read a whole topic.
  for (let ranges = 1; ; ranges++) {
    const outcome = await scanLocation(location, reader, options, scan);
    if (outcome.position !== undefined) return outcome.position;
    if (ranges >= MAX_EVENT_TIME_RANGES) {
      const range = outcome.range;
      throw new LedgerlineError(
        'FAILED_PRECONDITION',
        OffsetIndexReason.OFFSET_INDEX_INCONSISTENT,
        `no message at or after ${timestampMs} ms within ${ranges} ranges read after the located one ` +
          `(up to ledger ${range.ledgerId} entry ${range.lastEntryId}): the entries' largest event times overstate ` +
          'their messages; look the position up by broker time instead',
        { details: { ledgerId: String(range.ledgerId) } },
      );
    }
    location = index.locateAfter(outcome.range, outcome.nextFirstOffset);
  }
}

/** Range reads one lookup by event time makes at most when entries overstate their largest event time. */
export const MAX_EVENT_TIME_RANGES = 64;

type Scan = (range: EntryReadRange, entries: readonly StoredEntry[]) => ScanResult;

/** A located range read to its end without an answer, and the offset of the first message after it. */
type Exhausted = { position?: undefined; range: EntryReadRange; nextFirstOffset: number };

/** Reads the located range and scans it; a range that does not hold the answer is DATA_LOSS. */
async function finish(
  location: Location,
  reader: EntryReader,
  options: FindPositionOptions | undefined,
  scan: Scan,
): Promise<MessagePosition> {
  const outcome = await scanLocation(location, reader, options, scan);
  if (outcome.position !== undefined) return outcome.position;
  const range = outcome.range;
  throw new LedgerlineError(
    'DATA_LOSS',
    OffsetIndexReason.OFFSET_INDEX_INCONSISTENT,
    `ledger ${range.ledgerId} entries ${range.firstEntryId}..${range.lastEntryId} do not hold what its bounds promise`,
    { details: { ledgerId: String(range.ledgerId) } },
  );
}

/**
 * Reads the located range and scans it. A range wider than maxReadEntries
 * (a ledger without an index) is read in pages, stopping at the page that
 * holds the answer; the page count is bounded by the ledger's size.
 */
async function scanLocation(
  location: Location,
  reader: EntryReader,
  options: FindPositionOptions | undefined,
  scan: Scan,
): Promise<{ position: MessagePosition } | Exhausted> {
  if (location.kind === 'resolved') return { position: location.position };
  const maxReadEntries = options?.maxReadEntries ?? DEFAULT_MAX_READ_ENTRIES;
  checkIntegerIn(maxReadEntries, 1, MAX_READ_ENTRIES_LIMIT, 'maxReadEntries', OffsetIndexReason.INVALID_READ_LIMIT);
  const range = location.range;
  let page: EntryReadRange = {
    ...range,
    lastEntryId: Math.min(range.lastEntryId, range.firstEntryId + maxReadEntries - 1),
  };
  for (;;) {
    const entries = await reader.readRange(page.ledgerId, page.firstEntryId, page.lastEntryId);
    checkReadLength(page, entries);
    const result = scan(page, entries);
    if (result.position !== undefined) return { position: result.position };
    if (page.lastEntryId >= range.lastEntryId) return { range, nextFirstOffset: result.nextFirstOffset };
    const firstEntryId = page.lastEntryId + 1;
    const lastEntryId = Math.min(range.lastEntryId, firstEntryId + maxReadEntries - 1);
    page = { ledgerId: range.ledgerId, firstEntryId, lastEntryId, firstOffset: result.nextFirstOffset };
  }
}

function checkReadLength(page: EntryReadRange, entries: readonly StoredEntry[]): void {
  const expected = page.lastEntryId - page.firstEntryId + 1;
  if (!Array.isArray(entries) || entries.length !== expected) {
    throw new LedgerlineError(
      'DATA_LOSS',
      OffsetIndexReason.SHORT_READ,
      `reading entries ${page.firstEntryId}..${page.lastEntryId} of ledger ${page.ledgerId} returned ${Array.isArray(entries) ? entries.length : 'no'} entries, expected ${expected}`,
      { details: { ledgerId: String(page.ledgerId) } },
    );
  }
}
