import { LedgerlineError } from '@ledgerline/errors';
import { decodeEntry, type DecodedEntryMetadata } from './entry-framing.js';
import { checkIntegerIn, checkOffset } from './index-options.js';
import { MAX_OFFSET } from './limits.js';
import type { EntryReader } from './positions.js';
import { OffsetIndexReason } from './errors.js';

/** A ledger as Pulsar's in-memory LedgerInfo knows it: its id and entry count. */
export interface LedgerEntryCount {
  ledgerId: number;
  entries: number;
}

/** The entry a baseline search lands on and how many single-entry reads it took. */
export interface BaselineResult {
  ledgerId: number;
  entryId: number;
  reads: number;
}

/**
 * Pulsar's way of finding an offset (ManagedLedger.asyncFindPosition with
 * OpFindNewest and the predicate `index < offset`): one binary search over the
 * global entry count, one single-entry read per step, about 2 + log2 N reads.
 * Kept as the benchmark's anchor and as an independent check in tests.
 * Lands on the first entry whose index is >= offset, the first entry when
 * nothing matches, or the end position (next entry of the last ledger).
 */
export function binarySearchByOffset(
  ledgers: readonly LedgerEntryCount[],
  reader: EntryReader,
  offset: number,
): Promise<BaselineResult> {
  checkOffset(offset, 'offset');
  return findNewest(ledgers, reader, (metadata) => requireField(metadata.index, 'index') < offset);
}

/** The same search by broker time (predicate `brokerTimestamp < t`); exact only while timestamps never go back. */
export function binarySearchByTime(
  ledgers: readonly LedgerEntryCount[],
  reader: EntryReader,
  timestampMs: number,
): Promise<BaselineResult> {
  checkIntegerIn(timestampMs, 0, MAX_OFFSET, 'timestampMs', OffsetIndexReason.INVALID_TIMESTAMP);
  return findNewest(
    ledgers,
    reader,
    (metadata) => requireField(metadata.brokerTimestamp, 'brokerTimestamp') < timestampMs,
  );
}

type Predicate = (metadata: DecodedEntryMetadata) => boolean;

/** OpFindNewest: checkFirst, checkLast, then bisection with mid = min + max((max - min) / 2, 1). */
async function findNewest(ledgers: readonly LedgerEntryCount[], reader: EntryReader, matches: Predicate) {
  const layout = new EntryLayout(ledgers);
  let reads = 0;
  const test = async (entryNumber: number): Promise<boolean> => {
    const { ledgerId, entryId } = layout.positionOf(entryNumber);
    reads += 1;
    const [entry] = await reader.readRange(ledgerId, entryId, entryId);
    if (entry === undefined)
      throw new LedgerlineError('DATA_LOSS', OffsetIndexReason.SHORT_READ, `entry ${ledgerId}:${entryId} is missing`);
    return matches(decodeEntry(entry.data).metadata ?? {});
  };
  const total = layout.total;
  if (total === 0 || !(await test(0))) return { ...layout.positionOf(0), reads };
  let lastMatch = 0;
  let min = 0;
  let max = total - 1;
  if (await test(max)) return { ...layout.positionOf(max + 1), reads };
  const mid = () => min + Math.max(Math.floor((max - min) / 2), 1);
  // Each step halves [min, max]; the bound is a guard against a broken layout, far above log2 of any entry count.
  for (let step = 0; step < 128 && max > min; step++) {
    const middle = mid();
    if (await test(middle)) {
      lastMatch = middle;
      min = middle;
    } else {
      max = middle - 1;
    }
  }
  return { ...layout.positionOf(lastMatch + 1), reads };
}

/** Maps a global entry number to (ledger, entry) from entry counts in memory, as getPositionAfterN does. */
class EntryLayout {
  private readonly ledgers: readonly LedgerEntryCount[];
  private readonly starts: number[] = [];
  readonly total: number;

  constructor(ledgers: readonly LedgerEntryCount[]) {
    if (ledgers.length === 0)
      throw new LedgerlineError('INVALID_ARGUMENT', OffsetIndexReason.NO_LEDGERS, 'a topic needs a ledger');
    this.ledgers = ledgers;
    let total = 0;
    for (const ledger of ledgers) {
      this.starts.push(total);
      total += ledger.entries;
    }
    this.total = total;
  }

  /** Entry number `total` and beyond is the end position: the next entry of the last ledger. */
  positionOf(entryNumber: number): { ledgerId: number; entryId: number } {
    if (entryNumber >= this.total) {
      const last = this.ledgers[this.ledgers.length - 1] as LedgerEntryCount;
      return { ledgerId: last.ledgerId, entryId: last.entries };
    }
    let low = 0;
    let high = this.ledgers.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if ((this.starts[middle] as number) <= entryNumber) low = middle;
      else high = middle - 1;
    }
    // The last ledger starting at or before the entry holds it: an empty ledger shares its start with the next one.
    return {
      ledgerId: (this.ledgers[low] as LedgerEntryCount).ledgerId,
      entryId: entryNumber - (this.starts[low] as number),
    };
  }
}

function requireField(value: number | undefined, name: string): number {
  if (value === undefined) {
    throw new LedgerlineError(
      'DATA_LOSS',
      OffsetIndexReason.ENTRY_WITHOUT_OFFSET,
      `an entry carries no ${name} in its broker entry metadata`,
    );
  }
  return value;
}
