import {
  AckSet,
  MAX_BATCH_SIZE,
  checkEntryAcks,
  positionKey,
  type BatchAck,
  type CheckedEntryAcks,
  comparePositions,
  type EntryRange,
  type Position,
} from '@ledgerline/cursor-codec';
import { invalidArgument } from '@ledgerline/errors';
import { ManagedLedgerReason } from '../reasons.js';
import {
  canonicalMarkDelete,
  entryExists,
  findLedger,
  firstEntryAtOrAfter,
  type LedgerView,
} from '../ledgers/ledger-views.js';
import { formatPosition } from '../position.js';

/**
 * What acknowledgements change: the mark-delete position (everything at or
 * before it is consumed), the entries acknowledged above it, and the partly
 * acknowledged batch entries above it. Kept normalized: mark-delete in its
 * canonical spelling and as far forward as contiguous acks allow, nothing at
 * or below it in `acked` or `batchAcks`, no fully acknowledged batch.
 */
export interface AckState {
  markDelete: Position;
  acked: AckSet;
  batchAcks: Map<string, BatchAck>;
}

export function emptyAckState(markDelete: Position): AckState {
  return { markDelete, acked: new AckSet(), batchAcks: new Map() };
}

/**
 * Checks the positions and ranges of one individual-ack call by the same
 * rules and table as the wire (cursor-codec's checkEntryAcks): at most
 * DATA_PATH_LIMITS.maxAckPositionsPerCall entries, each naming an entry. The
 * wire checked them already; the managed cursor checks again because callers
 * in process reach it without the wire (deduplication, benches, the
 * robustness histories).
 */
export function checkAckPositions(
  positions: readonly Position[],
  ranges: readonly EntryRange[] = [],
): CheckedEntryAcks {
  return checkEntryAcks(positions, ranges, 'ack');
}

/**
 * Individual acks as inclusive ranges of one ledger each, in order, with
 * duplicates merged: a client acknowledging what it received sends runs of
 * consecutive entries, and a run is one range in the ack set, one existence
 * check and one insertion, not one per position.
 */
export function contiguousRanges(positions: readonly Position[], ranges: readonly EntryRange[] = []): EntryRange[] {
  const all: EntryRange[] = positions.map(({ ledgerId, entryId }) => ({
    ledgerId,
    firstEntryId: entryId,
    lastEntryId: entryId,
  }));
  for (const r of ranges) all.push({ ledgerId: r.ledgerId, firstEntryId: r.firstEntryId, lastEntryId: r.lastEntryId });
  all.sort((a, b) => a.ledgerId - b.ledgerId || a.firstEntryId - b.firstEntryId);
  const merged: EntryRange[] = [];
  let current: EntryRange | undefined;
  for (const r of all) {
    if (current !== undefined && current.ledgerId === r.ledgerId && r.firstEntryId <= current.lastEntryId + 1) {
      current.lastEntryId = Math.max(current.lastEntryId, r.lastEntryId);
      continue;
    }
    current = r;
    merged.push(current);
  }
  return merged;
}

/** The part of a range above mark-delete, which is all an ack can still change; undefined when none is. */
function aboveMarkDelete(md: Position, r: EntryRange): EntryRange | undefined {
  if (r.ledgerId < md.ledgerId) return undefined;
  const first = r.ledgerId === md.ledgerId ? Math.max(r.firstEntryId, md.entryId + 1) : r.firstEntryId;
  return first > r.lastEntryId ? undefined : { ledgerId: r.ledgerId, firstEntryId: first, lastEntryId: r.lastEntryId };
}

/**
 * Acknowledges entries, single positions and ranges, applied as contiguous
 * ranges (a range as it came, never one entry at a time); what is at or below
 * mark-delete is already consumed and ignored. Every range is checked before
 * any is applied, so an ack naming an entry the topic does not have changes
 * nothing. A ledger's entries are 0..entries-1, so a range exists when both
 * its ends do.
 */
export function ackEntries(
  state: AckState,
  views: readonly LedgerView[],
  positions: readonly Position[],
  acked: readonly EntryRange[] = [],
): void {
  const ranges: EntryRange[] = [];
  for (const r of contiguousRanges(positions, acked)) {
    const live = aboveMarkDelete(state.markDelete, r);
    if (live === undefined) continue;
    checkEntry(views, { ledgerId: live.ledgerId, entryId: live.firstEntryId });
    checkEntry(views, { ledgerId: live.ledgerId, entryId: live.lastEntryId });
    ranges.push(live);
  }
  for (const r of ranges) state.acked.addRange(r.ledgerId, r.firstEntryId, r.lastEntryId);
  normalize(state, views);
}

/** Acknowledges an inclusive range of one ledger; the part at or below mark-delete is ignored. Call normalize after. */
export function ackRange(
  state: AckState,
  views: readonly LedgerView[],
  ledgerId: number,
  first: number,
  last: number,
): void {
  const md = state.markDelete;
  const from = ledgerId === md.ledgerId ? Math.max(first, md.entryId + 1) : first;
  if (ledgerId < md.ledgerId || from > last) return;
  checkEntry(views, { ledgerId, entryId: last });
  state.acked.addRange(ledgerId, Math.max(from, 0), last);
}

/** Everything up to and including `p` is consumed (a cumulative ack); a position below mark-delete changes nothing. */
export function ackUpTo(state: AckState, views: readonly LedgerView[], p: Position): void {
  const target = canonicalMarkDelete(views, p);
  if (comparePositions(target, state.markDelete) <= 0) return;
  if (p.entryId >= 0) checkEntry(views, p);
  else if (findLedger(views, p.ledgerId) === undefined) throw outOfRange(p);
  state.markDelete = p;
  normalize(state, views);
}

/** Acknowledges messages inside a batch entry; the entry counts as acknowledged once every index is. */
export function ackBatchIndexes(
  state: AckState,
  views: readonly LedgerView[],
  p: Position,
  indexes: readonly number[],
  batchSize: number,
): void {
  checkBatch(indexes, batchSize);
  if (comparePositions(p, state.markDelete) <= 0) return;
  checkEntry(views, p);
  if (state.acked.has(p.ledgerId, p.entryId)) return;
  const key = positionKey(p.ledgerId, p.entryId);
  const existing = state.batchAcks.get(key);
  if (existing !== undefined && existing.batchSize !== batchSize) {
    throw invalidArgument(
      ManagedLedgerReason.INVALID_BATCH_ACK,
      `entry ${formatPosition(p)} was acknowledged as a batch of ${existing.batchSize}, not ${batchSize}`,
    );
  }
  const union = [...new Set([...(existing?.ackedIndexes ?? []), ...indexes])].sort((a, b) => a - b);
  if (union.length === batchSize) {
    state.batchAcks.delete(key);
    ackEntries(state, views, [p]);
    return;
  }
  state.batchAcks.set(key, { batchSize, ackedIndexes: union });
}

/**
 * Moves mark-delete over every acknowledged entry that directly follows it
 * (across ledger boundaries), drops what it passed, and spells it canonically.
 * Each step consumes one range of `acked`, so the loop ends.
 */
export function normalize(state: AckState, views: readonly LedgerView[]): void {
  let md = canonicalMarkDelete(views, state.markDelete);
  state.acked.removeUpTo(md);
  for (;;) {
    const next = firstEntryAtOrAfter(views, { ledgerId: md.ledgerId, entryId: md.entryId + 1 });
    const first = state.acked.first();
    if (next === undefined || first === undefined || comparePositions(first, next) !== 0) break;
    let end: Position = first;
    state.acked.forEachRange((ledgerId, _first, last) => {
      end = { ledgerId, entryId: last };
      return false;
    });
    state.acked.removeUpTo(end);
    md = canonicalMarkDelete(views, end);
  }
  state.markDelete = md;
  // A batch entry at or below mark-delete, or acknowledged whole, needs no index acks any more.
  for (const key of [...state.batchAcks.keys()]) {
    const [ledgerId, entryId] = key.split(':').map(Number) as [number, number];
    const covered = comparePositions({ ledgerId, entryId }, md) <= 0 || state.acked.has(ledgerId, entryId);
    if (covered) state.batchAcks.delete(key);
  }
}

function checkEntry(views: readonly LedgerView[], p: Position): void {
  if (!entryExists(views, p)) throw outOfRange(p);
}

function outOfRange(p: Position) {
  return invalidArgument(
    ManagedLedgerReason.POSITION_OUT_OF_RANGE,
    `position ${formatPosition(p)} is not an entry of this topic`,
  );
}

function checkBatch(indexes: readonly number[], batchSize: number): void {
  if (!Number.isSafeInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
    throw invalidArgument(ManagedLedgerReason.INVALID_BATCH_ACK, `batchSize must be from 1 to ${MAX_BATCH_SIZE}`);
  }
  if (!Array.isArray(indexes) || indexes.some((i) => !Number.isSafeInteger(i) || i < 0 || i >= batchSize)) {
    throw invalidArgument(
      ManagedLedgerReason.INVALID_BATCH_ACK,
      `batch indexes must be integers from 0 to ${batchSize - 1}`,
    );
  }
}
