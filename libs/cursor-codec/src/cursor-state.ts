import { AckSet } from './ack-set.js';
import { invalidState } from './errors.js';
import { parsePositionKey, type Position } from './position.js';

/**
 * The largest number of messages one entry may carry (Pulsar batches are far
 * smaller). Appends refuse more, offsets advance by at most this much per
 * entry, and a cursor keeps index acknowledgements for batches up to this size.
 * A multiple of 64, so a batch's deleteSet is a whole number of words.
 */
export const MAX_BATCH_SIZE = 1_000_000;
/** Most entries each of the properties and cursorProperties maps may hold. */
export const MAX_PROPERTIES = 65536;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * The acknowledged messages inside one batch entry that is only partly
 * acknowledged. Indexes are ascending, unique and below batchSize; at least
 * one index stays unacknowledged (a fully acknowledged entry belongs in the
 * AckSet instead).
 *
 * Pulsar stores the complement (the indexes still to deliver) without the
 * batch size, so a state read back from a Pulsar format has batchSize = the
 * highest unacknowledged index + 1: indexes past it count as acknowledged,
 * exactly as Pulsar delivers them.
 */
export interface BatchAck {
  batchSize: number;
  ackedIndexes: readonly number[];
}

/** Everything a cursor persists. */
export interface CursorState {
  /** Every entry at or before this position is consumed. */
  markDelete: Position;
  /** Individually acknowledged entries above markDelete. */
  acked: AckSet;
  /** Partly acknowledged batch entries, keyed by positionKey(ledgerId, entryId). */
  batchAcks: Map<string, BatchAck>;
  /** Pulsar's LongProperty list (PositionInfo field 4). Values read back are always bigint. */
  properties: Map<string, bigint | number>;
  /**
   * String properties of the cursor. Pulsar keeps these in ManagedCursorInfo
   * (field 8), not in PositionInfo: only the compact format carries them.
   */
  cursorProperties: Map<string, string>;
}

/** A state with defaults for everything not given (mark-delete at (-1, -1), nothing acknowledged). */
export function createCursorState(init: Partial<CursorState> = {}): CursorState {
  return {
    markDelete: init.markDelete ?? { ledgerId: -1, entryId: -1 },
    acked: init.acked ?? new AckSet(),
    batchAcks: init.batchAcks ?? new Map(),
    properties: init.properties ?? new Map(),
    cursorProperties: init.cursorProperties ?? new Map(),
  };
}

/** The indexes of a batch that are still unacknowledged, ascending. */
export function remainingBatchIndexes(batch: BatchAck): number[] {
  const remaining: number[] = [];
  let next = 0;
  for (const acked of batch.ackedIndexes) {
    while (next < acked) remaining.push(next++);
    next = acked + 1;
  }
  while (next < batch.batchSize) remaining.push(next++);
  return remaining;
}

/** A batch from its unacknowledged indexes (ascending), the way Pulsar stores it. */
export function batchAckFromRemaining(remaining: readonly number[]): BatchAck {
  const batchSize = (remaining[remaining.length - 1] ?? -1) + 1;
  const ackedIndexes: number[] = [];
  let next = 0;
  for (const index of remaining) {
    while (next < index) ackedIndexes.push(next++);
    next = index + 1;
  }
  return { batchSize, ackedIndexes };
}

/** A batch acknowledgement with its position, as the encoders consume them (sorted by position). */
export interface PositionedBatchAck extends Position {
  batch: BatchAck;
}

/**
 * Checks a state before encoding and returns its batch acknowledgements
 * sorted by position. Bad input is an INVALID_ARGUMENT error, never a crash.
 */
export function validateCursorState(state: CursorState): PositionedBatchAck[] {
  const { markDelete } = state;
  for (const [name, value] of [
    ['markDelete.ledgerId', markDelete?.ledgerId],
    ['markDelete.entryId', markDelete?.entryId],
  ] as const) {
    if (!Number.isSafeInteger(value) || (value as number) < -1) {
      throw invalidState(`${name} must be a safe integer >= -1, got ${String(value)}`);
    }
  }
  if (!(state.acked instanceof AckSet)) throw invalidState('acked must be an AckSet');
  validateProperties(state);
  const batches: PositionedBatchAck[] = [];
  for (const [key, batch] of state.batchAcks) {
    const position = parsePositionKey(key);
    if (position === undefined) throw invalidState(`batchAcks key "${key}" is not "ledgerId:entryId"`);
    validateBatch(key, batch);
    batches.push({ ...position, batch });
  }
  batches.sort((a, b) => (a.ledgerId !== b.ledgerId ? a.ledgerId - b.ledgerId : a.entryId - b.entryId));
  return batches;
}

function validateBatch(key: string, batch: BatchAck): void {
  const { batchSize, ackedIndexes } = batch;
  if (!Number.isSafeInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
    throw invalidState(`batch ${key}: batchSize must be in [1, ${MAX_BATCH_SIZE}], got ${String(batchSize)}`);
  }
  if (ackedIndexes.length >= batchSize) {
    throw invalidState(`batch ${key}: every index is acknowledged; add the entry to acked instead`);
  }
  let previous = -1;
  for (const index of ackedIndexes) {
    if (!Number.isInteger(index) || index <= previous || index >= batchSize) {
      throw invalidState(`batch ${key}: ackedIndexes must be ascending, unique and below ${batchSize}`);
    }
    previous = index;
  }
}

function validateProperties(state: CursorState): void {
  if (state.properties.size > MAX_PROPERTIES || state.cursorProperties.size > MAX_PROPERTIES) {
    throw invalidState(`at most ${MAX_PROPERTIES} properties and cursorProperties are kept`);
  }
  for (const [name, value] of state.properties) {
    const valid = typeof value === 'bigint' ? value >= INT64_MIN && value <= INT64_MAX : Number.isSafeInteger(value);
    if (!valid) throw invalidState(`property "${name}" must be a 64-bit integer, got ${String(value)}`);
  }
  for (const [name, value] of state.cursorProperties) {
    if (typeof value !== 'string') throw invalidState(`cursor property "${name}" must be a string`);
  }
}
