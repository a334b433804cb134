import { checkIntegerIn, checkOffset } from './index-options.js';
import type { LedgerRange } from './ledger-offset-index.js';
import { MAX_OFFSET } from './limits.js';
import type { EntryReadRange, Location, MessagePosition } from './positions.js';
import { checkTopicLedgers, type TopicLedger } from './topic-ledger.js';
import { OffsetIndexReason } from './errors.js';

/**
 * Finds messages of a topic by offset or broker time without touching the
 * store: the ledger comes from the per-ledger bounds (LedgerInfo), the entry
 * range from that ledger's sparse index. The answer is either a position
 * (when the index alone knows it) or the one range read that will tell it;
 * `resolveOffsetInEntries` / `resolveTimeInEntries` finish the job on the
 * entries that read returns. Immutable: build a new one when ledgers change.
 */
export class TopicOffsetIndex {
  readonly ledgers: readonly TopicLedger[];
  private readonly nonEmpty: TopicLedger[];
  /** cumulativeMaxTimestamps[i] = the largest broker timestamp in nonEmpty[0..i], non-decreasing. */
  private readonly cumulativeMaxTimestamps: Float64Array;
  /** The same over the ledgers' event-time keys (maxEventTime, else maxTimestamp). */
  private readonly cumulativeMaxEventTimes: Float64Array;

  /** `ledgers` in ledger-id order, the first retained one first and the current one last. */
  constructor(ledgers: readonly TopicLedger[]) {
    this.nonEmpty = checkTopicLedgers(ledgers);
    this.ledgers = [...ledgers];
    this.cumulativeMaxTimestamps = runningMaxima(this.nonEmpty, (ledger) => ledger.maxTimestamp as number);
    this.cumulativeMaxEventTimes = runningMaxima(
      this.nonEmpty,
      (ledger) => ledger.index?.maxEventTime ?? ledger.maxEventTime ?? (ledger.maxTimestamp as number),
    );
  }

  /** The first retained offset; equals `endOffset` when the topic holds no message. */
  get firstOffset(): number {
    return this.nonEmpty[0]?.firstOffset ?? this.endOffset;
  }

  /** The offset the next message will get. */
  get endOffset(): number {
    return (this.ledgers[this.ledgers.length - 1] as TopicLedger).lastOffset + 1;
  }

  /** Where the message with `offset` is, or the range to read to find out. */
  locateOffset(offset: number): Location {
    checkOffset(offset, 'offset');
    const first = this.nonEmpty[0];
    if (first === undefined || offset > this.endOffset - 1) return this.end();
    if (offset < first.firstOffset) return this.earliest(true);
    const ledger = this.nonEmpty[firstAtLeast(this.nonEmpty.length, (at) => this.nonEmpty[at]!.lastOffset >= offset)]!;
    const range = ledger.index?.locateOffset(offset) ?? wholeLedger(ledger);
    if (offset === range.firstOffset) {
      // The first message of an entry at a range start needs no read.
      return resolved(ledger.ledgerId, range.firstEntryId, 0, offset);
    }
    return { kind: 'read', range: { ledgerId: ledger.ledgerId, ...range } };
  }

  /**
   * Where the first message whose broker timestamp is >= `timestampMs` is, or
   * the range to read to find out. Broker clocks may go back; the answer is
   * still the first entry in topic order whose own timestamp reaches the time.
   */
  locateTime(timestampMs: number): Location {
    checkIntegerIn(timestampMs, 0, MAX_OFFSET, 'timestampMs', OffsetIndexReason.INVALID_TIMESTAMP);
    const first = this.nonEmpty[0];
    const count = this.nonEmpty.length;
    if (first === undefined || timestampMs > this.cumulativeMaxTimestamps[count - 1]!) return this.end();
    // Every entry of the first ledger is at or after the time, so its first entry is the answer.
    if (timestampMs <= (first.minTimestamp as number))
      return this.earliest(timestampMs < (first.minTimestamp as number));
    const ledger = this.nonEmpty[firstAtLeast(count, (at) => this.cumulativeMaxTimestamps[at]! >= timestampMs)]!;
    const range = ledger.index?.locateTime(timestampMs) ?? wholeLedger(ledger);
    return { kind: 'read', range: { ledgerId: ledger.ledgerId, ...range } };
  }

  /**
   * Where the first message whose own time (event time) is >= `timestampMs`
   * may be: the range holding the first entry whose event-time key (its
   * largest event time, or its broker timestamp when it has none) reaches the
   * time. The caller scans that entry's messages (findPositionByEventTime).
   * Time 0 is the earliest: every key is at least 0.
   */
  locateEventTime(timestampMs: number): Location {
    checkIntegerIn(timestampMs, 0, MAX_OFFSET, 'timestampMs', OffsetIndexReason.INVALID_TIMESTAMP);
    const count = this.nonEmpty.length;
    if (count === 0 || timestampMs > this.cumulativeMaxEventTimes[count - 1]!) return this.end();
    if (timestampMs === 0) return this.earliest(false);
    const ledger = this.nonEmpty[firstAtLeast(count, (at) => this.cumulativeMaxEventTimes[at]! >= timestampMs)]!;
    const range = ledger.index?.locateEventTime(timestampMs) ?? wholeLedger(ledger);
    return { kind: 'read', range: { ledgerId: ledger.ledgerId, ...range } };
  }

  /**
   * What follows `range`, which a lookup read to its end without an answer:
   * the rest of its ledger (from `nextFirstOffset`), else the next ledger with
   * entries, whole, else the end of the topic.
   */
  locateAfter(range: EntryReadRange, nextFirstOffset: number): Location {
    const at = this.nonEmpty.findIndex((ledger) => ledger.ledgerId === range.ledgerId);
    const ledger = this.nonEmpty[at];
    if (ledger !== undefined && range.lastEntryId + 1 < ledger.entries) {
      const rest = {
        firstEntryId: range.lastEntryId + 1,
        lastEntryId: ledger.entries - 1,
        firstOffset: nextFirstOffset,
      };
      return { kind: 'read', range: { ledgerId: ledger.ledgerId, ...rest } };
    }
    const next = at < 0 ? undefined : this.nonEmpty[at + 1];
    if (next === undefined) return this.end();
    return { kind: 'read', range: { ledgerId: next.ledgerId, ...wholeLedger(next) } };
  }

  private earliest(beforeEarliest: boolean): Location {
    const first = this.nonEmpty[0] as TopicLedger;
    return {
      kind: 'resolved',
      position: { ...resolved(first.ledgerId, 0, 0, first.firstOffset).position, beforeEarliest },
    };
  }

  /** The position after the last entry: the next entry of the last ledger. */
  private end(): Location {
    const last = this.ledgers[this.ledgers.length - 1] as TopicLedger;
    const position: MessagePosition = {
      ledgerId: last.ledgerId,
      entryId: last.entries,
      batchIndex: 0,
      offset: last.lastOffset + 1,
      beforeEarliest: false,
      pastEnd: true,
    };
    return { kind: 'resolved', position };
  }
}

function runningMaxima(ledgers: readonly TopicLedger[], valueOf: (ledger: TopicLedger) => number): Float64Array {
  const maxima = new Float64Array(ledgers.length);
  let runningMax = -1;
  ledgers.forEach((ledger, position) => {
    runningMax = Math.max(runningMax, valueOf(ledger));
    maxima[position] = runningMax;
  });
  return maxima;
}

function resolved(ledgerId: number, entryId: number, batchIndex: number, offset: number) {
  const position: MessagePosition = { ledgerId, entryId, batchIndex, offset, beforeEarliest: false, pastEnd: false };
  return { kind: 'resolved' as const, position };
}

function wholeLedger(ledger: TopicLedger): LedgerRange {
  return { firstEntryId: 0, lastEntryId: ledger.entries - 1, firstOffset: ledger.firstOffset };
}

/** The smallest position in 0..count-1 where `holds` is true; `holds` is monotone and true at count - 1. */
function firstAtLeast(count: number, holds: (position: number) => boolean): number {
  let low = 0;
  let high = count - 1;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (holds(middle)) high = middle;
    else low = middle + 1;
  }
  return low;
}
