import { positionKey, parsePositionKey, type EntryRange, type Position } from '@ledgerline/cursor-codec';
import { invalidArgument, LedgerlineError } from '@ledgerline/errors';
import { ackBatchIndexes, ackRange, ackUpTo, normalize, type AckState } from './cursor-acks.js';
import { ManagedLedgerReason } from '../reasons.js';
import { canonicalMarkDelete, type LedgerView } from '../ledgers/ledger-views.js';
import { checkPosition } from '../position.js';

export interface BatchAckRecord {
  position: Position;
  /** Acknowledged indexes, ascending. */
  ackedIndexes: number[];
  batchSize: number;
}

/**
 * Acknowledgements a read-only owner sends to the writer owner (PIP-63):
 * ranges it saw acknowledged, a proposed mark-delete, batch-index acks, and
 * the reset epoch it computed them against.
 */
export interface AckDelta {
  ackedRanges?: EntryRange[];
  /** Applied only when it moves mark-delete forward. */
  markDelete?: Position;
  batchAcks?: BatchAckRecord[];
  resetEpoch: number;
}

/** The acknowledgement part of a cursor, as GetCursor returns it. */
export interface ExportedAcks {
  markDelete: Position;
  ackedRanges: EntryRange[];
  batchAcks: BatchAckRecord[];
}

/**
 * Merges a delta into the state by union: mark-delete takes the larger of
 * the two, acknowledged ranges and batch indexes are added. Union and
 * maximum are idempotent and commutative, so two read-only owners serving
 * one subscription never undo each other's acks, and a delta delivered twice
 * changes nothing the second time. Bad deltas are INVALID_ARGUMENT.
 */
export function applyAckDelta(state: AckState, views: readonly LedgerView[], delta: AckDelta, maxRanges: number): void {
  const ranges = delta.ackedRanges ?? [];
  const batches = delta.batchAcks ?? [];
  if (ranges.length + batches.length > maxRanges) {
    throw invalidArgument(
      ManagedLedgerReason.INVALID_ACK_DELTA,
      `an ack delta may carry at most ${maxRanges} ranges and batches (maxAckDeltaRanges), got ${ranges.length + batches.length}`,
    );
  }
  for (const range of ranges) checkRange(range);
  if (delta.markDelete !== undefined) ackUpTo(state, views, checkPosition(delta.markDelete, 'markDelete'));
  for (const range of ranges) ackRange(state, views, range.ledgerId, range.firstEntryId, range.lastEntryId);
  normalize(state, views);
  for (const batch of batches) {
    ackBatchIndexes(
      state,
      views,
      checkPosition(batch?.position, 'batch position'),
      batch.ackedIndexes,
      batch.batchSize,
    );
  }
}

/**
 * Checks a delta from outside before it is merged: its shape, and that it
 * was computed against the cursor's current reset epoch (else ABORTED /
 * CURSOR_RESET_EPOCH_MISMATCH: the reader must re-read the cursor).
 */
export function checkAckDelta(delta: AckDelta, resetEpoch: number): void {
  if (typeof delta !== 'object' || delta === null || !Number.isSafeInteger(delta.resetEpoch)) {
    throw invalidArgument(ManagedLedgerReason.INVALID_ACK_DELTA, 'an ack delta needs a resetEpoch and optional ranges');
  }
  if (!Array.isArray(delta.ackedRanges ?? []) || !Array.isArray(delta.batchAcks ?? [])) {
    throw invalidArgument(ManagedLedgerReason.INVALID_ACK_DELTA, 'ackedRanges and batchAcks must be arrays');
  }
  if (delta.resetEpoch !== resetEpoch) {
    throw new LedgerlineError(
      'ABORTED',
      ManagedLedgerReason.CURSOR_RESET_EPOCH_MISMATCH,
      `the delta was computed against reset epoch ${String(delta?.resetEpoch)}, the cursor is at ${resetEpoch}`,
    );
  }
}

/** The whole cursor as GetCursor returns it. */
export interface ExportedCursorState extends ExportedAcks {
  properties: Map<string, bigint | number>;
  cursorProperties: Map<string, string>;
  resetEpoch: number;
  lastConfirmedEntry: Position | undefined;
  managedLedgerVersion: number;
}

export function exportAcks(state: AckState, views: readonly LedgerView[]): ExportedAcks {
  const ackedRanges: EntryRange[] = [];
  state.acked.forEachRange((ledgerId, firstEntryId, lastEntryId) => {
    ackedRanges.push({ ledgerId, firstEntryId, lastEntryId });
  });
  const batchAcks = [...state.batchAcks]
    .map(([key, batch]) => ({
      position: parsePositionKey(key)!,
      ackedIndexes: [...batch.ackedIndexes],
      batchSize: batch.batchSize,
    }))
    .sort((a, b) => a.position.ledgerId - b.position.ledgerId || a.position.entryId - b.position.entryId);
  return { markDelete: canonicalMarkDelete(views, state.markDelete), ackedRanges, batchAcks };
}

/** The batch key of a position, as CursorState.batchAcks uses. */
export function batchKey(p: Position): string {
  return positionKey(p.ledgerId, p.entryId);
}

function checkRange(range: EntryRange): void {
  const ok =
    range !== null &&
    typeof range === 'object' &&
    [range.ledgerId, range.firstEntryId, range.lastEntryId].every((v) => Number.isSafeInteger(v) && v >= 0) &&
    range.firstEntryId <= range.lastEntryId;
  if (!ok) {
    throw invalidArgument(
      ManagedLedgerReason.INVALID_ACK_DELTA,
      'an acked range needs non-negative safe integers with firstEntryId <= lastEntryId',
    );
  }
}
