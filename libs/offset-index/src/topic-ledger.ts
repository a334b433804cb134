import { invalidArgument } from '@ledgerline/errors';
import { checkIntegerIn, checkOffset } from './index-options.js';
import type { LedgerOffsetIndex } from './ledger-offset-index.js';
import { MAX_OFFSET } from './limits.js';
import { OffsetIndexReason } from './errors.js';

/** The most ledgers one topic index accepts. */
export const MAX_LEDGERS_PER_TOPIC = 1_000_000;

/**
 * What the topic index knows about one ledger, from its LedgerInfo: entry
 * count, first and last offset (lastOffset = firstOffset - 1 for an empty
 * ledger), the range of broker timestamps, and the sparse index when there is
 * one. Without an index a lookup must read the whole ledger.
 */
export interface TopicLedger {
  ledgerId: number;
  entries: number;
  firstOffset: number;
  lastOffset: number;
  /** Required when the ledger has entries. */
  minTimestamp?: number;
  /** Required when the ledger has entries. */
  maxTimestamp?: number;
  /**
   * The largest event-time key of the ledger's entries (LedgerOffsetIndex's
   * maxEventTime); absent for a ledger closed before event times, whose
   * maxTimestamp then stands in.
   */
  maxEventTime?: number;
  index?: LedgerOffsetIndex;
}

/**
 * An open ledger as the topic index sees it, from its live index (a closed
 * one comes from its LedgerInfo: topicLedgerFromLedgerInfo). Its largest
 * event time is the index's own (TopicOffsetIndex reads it from there).
 */
export function topicLedgerFromIndex(ledgerId: number, index: LedgerOffsetIndex): TopicLedger {
  const ledger: TopicLedger = {
    ledgerId,
    entries: index.entryCount,
    firstOffset: index.firstOffset,
    lastOffset: index.lastOffset,
    index,
  };
  if (index.entryCount > 0) {
    ledger.minTimestamp = index.minTimestamp;
    ledger.maxTimestamp = index.maxTimestamp;
  }
  return ledger;
}

/**
 * Checks one topic's ledgers: ids ascending, offsets contiguous from one
 * ledger to the next, at least one message per entry, and any index in
 * agreement with its ledger. Returns the ledgers that hold entries.
 */
export function checkTopicLedgers(ledgers: readonly TopicLedger[]): TopicLedger[] {
  if (!Array.isArray(ledgers) || ledgers.length === 0) {
    throw invalidArgument(
      OffsetIndexReason.NO_LEDGERS,
      'a topic offset index needs at least one ledger (the current one)',
    );
  }
  if (ledgers.length > MAX_LEDGERS_PER_TOPIC) {
    throw invalidArgument(
      OffsetIndexReason.TOO_MANY_LEDGERS,
      `a topic offset index takes at most ${MAX_LEDGERS_PER_TOPIC} ledgers`,
    );
  }
  const nonEmpty: TopicLedger[] = [];
  let previous: TopicLedger | undefined;
  for (const ledger of ledgers) {
    checkLedger(ledger);
    if (previous !== undefined) checkFollows(previous, ledger);
    if (ledger.entries > 0) nonEmpty.push(ledger);
    previous = ledger;
  }
  return nonEmpty;
}

function checkLedger(ledger: TopicLedger): void {
  checkIntegerIn(ledger?.ledgerId, 0, MAX_OFFSET, 'ledgerId', OffsetIndexReason.INVALID_LEDGER_ID);
  checkIntegerIn(ledger.entries, 0, MAX_OFFSET, 'entries', OffsetIndexReason.INVALID_LEDGER_SUMMARY);
  checkOffset(ledger.firstOffset, 'firstOffset', 'INVALID_LEDGER_SUMMARY');
  checkIntegerIn(ledger.lastOffset, -1, MAX_OFFSET, 'lastOffset', OffsetIndexReason.INVALID_LEDGER_SUMMARY);
  const messages = ledger.lastOffset - ledger.firstOffset + 1;
  if (messages < ledger.entries || (ledger.entries === 0 && messages !== 0)) {
    throw summaryError(
      ledger,
      `${ledger.entries} entries cannot hold offsets ${ledger.firstOffset}..${ledger.lastOffset}`,
    );
  }
  if (ledger.entries > 0) {
    checkIntegerIn(ledger.minTimestamp, 0, MAX_OFFSET, 'minTimestamp', OffsetIndexReason.INVALID_LEDGER_SUMMARY);
    checkIntegerIn(ledger.maxTimestamp, 0, MAX_OFFSET, 'maxTimestamp', OffsetIndexReason.INVALID_LEDGER_SUMMARY);
    if ((ledger.minTimestamp as number) > (ledger.maxTimestamp as number)) {
      throw summaryError(ledger, 'minTimestamp is after maxTimestamp');
    }
    if (ledger.maxEventTime !== undefined) {
      checkIntegerIn(ledger.maxEventTime, 0, MAX_OFFSET, 'maxEventTime', OffsetIndexReason.INVALID_LEDGER_SUMMARY);
    }
  }
  const index = ledger.index;
  if (index !== undefined && !indexMatches(ledger, index)) {
    throw invalidArgument(
      OffsetIndexReason.LEDGER_INDEX_MISMATCH,
      `the index of ledger ${ledger.ledgerId} covers ${index.entryCount} entries, offsets ${index.firstOffset}..${index.lastOffset}, which is not what the ledger holds`,
      { ledgerId: String(ledger.ledgerId) },
    );
  }
}

function indexMatches(ledger: TopicLedger, index: LedgerOffsetIndex): boolean {
  const sameShape =
    index.entryCount === ledger.entries &&
    index.firstOffset === ledger.firstOffset &&
    index.lastOffset === ledger.lastOffset;
  if (!sameShape || ledger.entries === 0) return sameShape;
  const sameTimes = index.minTimestamp === ledger.minTimestamp && index.maxTimestamp === ledger.maxTimestamp;
  return sameTimes && (ledger.maxEventTime === undefined || index.maxEventTime === ledger.maxEventTime);
}

function checkFollows(previous: TopicLedger, ledger: TopicLedger): void {
  if (ledger.ledgerId <= previous.ledgerId) {
    throw summaryError(ledger, `ledger ids must ascend, but it follows ledger ${previous.ledgerId}`);
  }
  if (ledger.firstOffset !== previous.lastOffset + 1) {
    throw invalidArgument(
      OffsetIndexReason.OFFSETS_NOT_CONTIGUOUS,
      `ledger ${ledger.ledgerId} starts at offset ${ledger.firstOffset}, but ledger ${previous.ledgerId} ends at ${previous.lastOffset}`,
      { ledgerId: String(ledger.ledgerId) },
    );
  }
}

function summaryError(ledger: TopicLedger, detail: string) {
  return invalidArgument(OffsetIndexReason.INVALID_LEDGER_SUMMARY, `ledger ${ledger.ledgerId}: ${detail}`, {
    ledgerId: String(ledger.ledgerId),
  });
}
