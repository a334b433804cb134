import { messageTimesMs } from '@ledgerline/message-format';
import {
  findPositionByEventTime,
  findPositionByOffset,
  findPositionByTime,
  LedgerOffsetIndex,
  topicLedgerFromIndex,
  TopicOffsetIndex,
  type EntryReader,
  type MessagePosition,
  type TopicLedger,
} from '@ledgerline/offset-index';
import type { Position } from '@ledgerline/cursor-codec';
import { storedLowWatermark } from '@ledgerline/ledger-info';
import { invalidArgument, LedgerlineError } from '@ledgerline/errors';
import type { LedgerContext } from '../context.js';
import { checkPosition } from '../position.js';
import { ManagedLedgerReason } from '../reasons.js';
import { ledgerViews } from './ledger-views.js';

/** Where a seek goes: the entry to read next. */
export type SeekTarget = { position: Position } | { offset: number } | { timestampMs: number };

/** Deserialized ledger indexes, keyed by the stored bytes (summaries share them across info versions). */
const indexCache = new WeakMap<Uint8Array, LedgerOffsetIndex>();

/**
 * The topic's ledgers as the offset index sees them: closed ledgers with the
 * sparse index stored at close, the open ledger with the index it is building.
 */
function topicIndex(ctx: LedgerContext): TopicOffsetIndex {
  const views = ledgerViews(ctx.keeper.info.ledgers, ctx.current);
  if (views.length === 0) {
    throw new LedgerlineError(
      'FAILED_PRECONDITION',
      ManagedLedgerReason.OFFSET_OUT_OF_RANGE,
      `${ctx.name} has no ledgers`,
    );
  }
  const ledgers = views.map((view, position): TopicLedger => {
    if (ctx.current !== undefined && view.ledgerId === ctx.current.ledgerId) {
      return topicLedgerFromIndex(view.ledgerId, ctx.current.index);
    }
    const summary = ctx.keeper.info.ledgers[position]!;
    const stored = summary.offsetIndex;
    const ledger: TopicLedger = {
      ledgerId: view.ledgerId,
      entries: view.entries,
      firstOffset: view.firstOffset,
      lastOffset: view.lastOffset,
    };
    if (summary.minBrokerTimestampMs !== undefined) ledger.minTimestamp = summary.minBrokerTimestampMs;
    if (summary.maxBrokerTimestampMs !== undefined) ledger.maxTimestamp = summary.maxBrokerTimestampMs;
    if (summary.maxEventTimeMs !== undefined) ledger.maxEventTime = summary.maxEventTimeMs;
    if (stored !== undefined) ledger.index = cachedIndex(stored);
    return ledger;
  });
  return new TopicOffsetIndex(ledgers);
}

function cachedIndex(bytes: Uint8Array): LedgerOffsetIndex {
  let index = indexCache.get(bytes);
  if (index === undefined) {
    index = LedgerOffsetIndex.deserialize(bytes);
    indexCache.set(bytes, index);
  }
  return index;
}

function reader(ctx: LedgerContext): EntryReader {
  return { readRange: (ledgerId, first, last) => ctx.store.read(ledgerId, first, last) };
}

/**
 * The entry holding message `offset`, in at most one storage read, none when
 * its ledger's per-entry offsets are in memory (the open ledger's always, a
 * closed one's while offsetTables keeps it). Below the low watermark (records
 * deleted before it, storedLowWatermark) the answer is the watermark's entry,
 * before the earliest: those offsets are trimmed even where their ledger is
 * kept.
 */
export async function findByOffset(ctx: LedgerContext, offset: number): Promise<MessagePosition> {
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw invalidArgument(ManagedLedgerReason.OFFSET_OUT_OF_RANGE, 'an offset must be a non-negative safe integer');
  }
  const lowWatermark = storedLowWatermark(ctx.keeper.info);
  if (offset >= lowWatermark) return locate(ctx, offset);
  return { ...(await locate(ctx, lowWatermark)), beforeEarliest: true };
}

/**
 * A Kafka fetch asks for the offset after the last one it got, which is an
 * entry's first but seldom an index point's: the sparse index alone then
 * reads up to entriesPerPoint entries from the store (past the entry cache)
 * before the read of the entries themselves, a second store round trip per
 * fetch even when those entries are cached.
 */
async function locate(ctx: LedgerContext, offset: number): Promise<MessagePosition> {
  return fromOffsetTable(ctx, offset) ?? findPositionByOffset(topicIndex(ctx), reader(ctx), offset);
}

/** The position of `offset` from its ledger's per-entry offsets, if they are in memory. */
function fromOffsetTable(ctx: LedgerContext, offset: number): MessagePosition | undefined {
  const views = ledgerViews(ctx.keeper.info.ledgers, ctx.current);
  // Newest first: catch-up and tailing reads are mostly in the last ledgers.
  const view = views.findLast((v) => v.entries > 0 && v.firstOffset <= offset && offset <= v.lastOffset);
  if (view === undefined) return undefined;
  const table = ctx.current?.ledgerId === view.ledgerId ? ctx.current.offsets : ctx.offsetTables.peek(view.ledgerId);
  const entry = table?.entryHolding(offset);
  if (entry === undefined || entry.entryId >= view.entries) return undefined;
  return {
    ledgerId: view.ledgerId,
    entryId: entry.entryId,
    batchIndex: offset - entry.firstOffset,
    offset,
    beforeEarliest: false,
    pastEnd: false,
  };
}

/**
 * The first entry whose broker timestamp is at least `timestampMs`, in at
 * most one storage read; one below the low watermark answers the watermark's
 * entry, as a time before the earliest message does.
 */
export async function findByTime(ctx: LedgerContext, timestampMs: number): Promise<MessagePosition> {
  checkTimestamp(timestampMs);
  return aboveLowWatermark(ctx, await findPositionByTime(topicIndex(ctx), reader(ctx), timestampMs));
}

/**
 * The first message whose own time (event time, as a reader is answered it:
 * messageTimesMs) is at least `timestampMs`, Kafka's lookup on a CreateTime
 * topic: the index's running maximum of each entry's largest event time
 * locates the entry (one storage read; more, up to MAX_EVENT_TIME_RANGES,
 * only when entries overstate their largest event time), whose messages are
 * then decoded. Entries stored without their largest event time count with their
 * broker timestamp. Below the low watermark as findByTime.
 */
export async function findByEventTime(ctx: LedgerContext, timestampMs: number): Promise<MessagePosition> {
  checkTimestamp(timestampMs);
  const found = await findPositionByEventTime(topicIndex(ctx), reader(ctx), timestampMs, messageTimesMs);
  return aboveLowWatermark(ctx, found);
}

function checkTimestamp(timestampMs: number): void {
  if (!Number.isSafeInteger(timestampMs) || timestampMs < 0) {
    throw invalidArgument(ManagedLedgerReason.OFFSET_OUT_OF_RANGE, 'a timestamp must be a non-negative safe integer');
  }
}

async function aboveLowWatermark(ctx: LedgerContext, found: MessagePosition): Promise<MessagePosition> {
  const lowWatermark = storedLowWatermark(ctx.keeper.info);
  if (found.pastEnd || found.offset >= lowWatermark) return found;
  return { ...(await locate(ctx, lowWatermark)), beforeEarliest: true };
}

/** The lookups a seek by offset or time goes through (the managed ledger's, which check it is readable). */
export interface PositionLookups {
  findPosition(offset: number): Promise<MessagePosition>;
  findPositionByTime(timestampMs: number): Promise<MessagePosition>;
}

/** The entry a seek lands on: the first one a reader then gets. */
export async function resolveSeekTarget(target: SeekTarget, lookups: PositionLookups): Promise<Position> {
  if (typeof target !== 'object' || target === null) {
    throw invalidArgument(
      ManagedLedgerReason.INVALID_SEEK_TARGET,
      'a seek target is {position}, {offset} or {timestampMs}',
    );
  }
  if ('position' in target) return checkPosition(target.position);
  const found =
    'offset' in target
      ? await lookups.findPosition(target.offset)
      : await lookups.findPositionByTime(target.timestampMs);
  return { ledgerId: found.ledgerId, entryId: found.entryId };
}
