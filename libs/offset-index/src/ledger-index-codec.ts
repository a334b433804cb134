import { crc32c } from '@node-rs/crc32';
import { invalidArgument } from '@ledgerline/errors';
import {
  MAX_BYTES_PER_POINT,
  MAX_ENTRIES_PER_POINT,
  MAX_INDEX_POINTS,
  MAX_OFFSET,
  MAX_SERIALIZED_INDEX_BYTES,
} from './limits.js';
import { readVarint, varintSize, writeVarint, type VarintErrors } from './varint.js';
import { OffsetIndexReason } from './errors.js';

/**
 * Serialized ledger index, version 2:
 *   magic 0x4c4f ("LO", 2 bytes) | version (1 byte) |
 *   varints: entriesPerPoint, bytesPerPoint, firstOffset, entryCount, messageCount,
 *            minTimestamp, maxTimestamp, entriesSincePoint, bytesSincePoint, pointCount,
 *            maxEventTime (version 2) |
 *   for points 1..pointCount-1, varint deltas from the previous point of
 *            entry id, offset before, max timestamp before, max event time before (version 2) |
 *   crc32c of everything before it (4 bytes, big-endian).
 * Point 0 is implicit: entry 0, offset before firstOffset - 1, no timestamp.
 * Point 1's deltas are taken from (0, firstOffset, 0, 0), so every delta is >= 0.
 * Version 1 (written before event times) has neither event-time value: its
 * entries carried none, so their broker timestamps are their event-time keys.
 */
export const LEDGER_INDEX_MAGIC = 0x4c4f;
export const LEDGER_INDEX_VERSION = 2;
/** The version before event times, still read. */
const LEDGER_INDEX_VERSION_BROKER_TIME_ONLY = 1;

/** The arrays a ledger index is made of; the serialization reads and writes exactly these. */
export interface LedgerIndexState {
  entriesPerPoint: number;
  bytesPerPoint: number;
  firstOffset: number;
  entryCount: number;
  lastOffset: number;
  minTimestamp: number;
  maxTimestamp: number;
  /** The running maximum of the entries' event-time keys (see LedgerOffsetIndex); -1 while empty. */
  maxEventTime: number;
  entriesSincePoint: number;
  bytesSincePoint: number;
  pointCount: number;
  pointEntryIds: Float64Array;
  offsetsBefore: Float64Array;
  maxTimestampsBefore: Float64Array;
  maxEventTimesBefore: Float64Array;
}

const PREFIX_BYTES = 3;
const CHECKSUM_BYTES = 4;

const indexVarintErrors: VarintErrors = {
  context: 'ledger offset index',
  truncatedReason: 'OFFSET_INDEX_CORRUPT',
  tooLargeReason: 'OFFSET_INDEX_CORRUPT',
};

/** Writes the current version; `version` 1 is for specs that check old indexes still read. */
export function encodeLedgerIndex(
  state: Readonly<LedgerIndexState>,
  version: number = LEDGER_INDEX_VERSION,
): Uint8Array {
  const withEventTimes = version !== LEDGER_INDEX_VERSION_BROKER_TIME_ONLY;
  const values = headerValues(state);
  if (withEventTimes) values.push(state.entryCount === 0 ? 0 : state.maxEventTime);
  for (let point = 1; point < state.pointCount; point++) {
    values.push(
      at(state.pointEntryIds, point) - (point === 1 ? 0 : at(state.pointEntryIds, point - 1)),
      at(state.offsetsBefore, point) - (point === 1 ? state.firstOffset : at(state.offsetsBefore, point - 1)),
      at(state.maxTimestampsBefore, point) - (point === 1 ? 0 : at(state.maxTimestampsBefore, point - 1)),
    );
    if (withEventTimes) {
      values.push(at(state.maxEventTimesBefore, point) - (point === 1 ? 0 : at(state.maxEventTimesBefore, point - 1)));
    }
  }
  let size = PREFIX_BYTES + CHECKSUM_BYTES;
  for (const value of values) size += varintSize(value);
  const bytes = new Uint8Array(size);
  bytes[0] = LEDGER_INDEX_MAGIC >> 8;
  bytes[1] = LEDGER_INDEX_MAGIC & 0xff;
  bytes[2] = version;
  let position = PREFIX_BYTES;
  for (const value of values) position = writeVarint(bytes, position, value);
  new DataView(bytes.buffer).setUint32(position, crc32c(bytes.subarray(0, position)));
  return bytes;
}

function headerValues(state: Readonly<LedgerIndexState>): number[] {
  const empty = state.entryCount === 0;
  return [
    state.entriesPerPoint,
    state.bytesPerPoint,
    state.firstOffset,
    state.entryCount,
    state.lastOffset - state.firstOffset + 1,
    empty ? 0 : state.minTimestamp,
    empty ? 0 : state.maxTimestamp,
    state.entriesSincePoint,
    state.bytesSincePoint,
    state.pointCount,
  ];
}

/** Decodes and fully checks a serialized ledger index; anything wrong is INVALID_ARGUMENT / OFFSET_INDEX_CORRUPT. */
export function decodeLedgerIndex(bytes: Uint8Array): LedgerIndexState {
  const version = checkFrame(bytes);
  const withEventTimes = version !== LEDGER_INDEX_VERSION_BROKER_TIME_ONLY;
  const end = bytes.length - CHECKSUM_BYTES;
  let position = PREFIX_BYTES;
  const next = (): number => {
    const read = readVarint(bytes, position, end, indexVarintErrors);
    position = read.next;
    return read.value;
  };
  const state = readHeader(next);
  const storedMaxEventTime = withEventTimes ? next() : state.maxTimestamp;
  state.maxEventTime = state.entryCount === 0 ? -1 : storedMaxEventTime;
  // Point 1's deltas are taken from (entry 0, firstOffset, time 0, time 0); later ones from the point before.
  let entryId = 0;
  let offsetBefore = state.firstOffset;
  let maxTimestampBefore = 0;
  let maxEventTimeBefore = 0;
  for (let point = 1; point < state.pointCount; point++) {
    entryId += next();
    offsetBefore += next();
    maxTimestampBefore += next();
    maxEventTimeBefore = withEventTimes ? maxEventTimeBefore + next() : maxTimestampBefore;
    state.pointEntryIds[point] = entryId;
    state.offsetsBefore[point] = offsetBefore;
    state.maxTimestampsBefore[point] = maxTimestampBefore;
    state.maxEventTimesBefore[point] = maxEventTimeBefore;
  }
  if (position !== end) throw corrupt(`${end - position} unexpected bytes after the last point`);
  checkPoints(state);
  return state;
}

/** Checks magic, version and checksum; returns the version. */
function checkFrame(bytes: Uint8Array): number {
  if (!(bytes instanceof Uint8Array)) throw corrupt('a serialized index must be a Uint8Array');
  if (bytes.length > MAX_SERIALIZED_INDEX_BYTES) throw corrupt(`${bytes.length} bytes is larger than the limit`);
  if (bytes.length < PREFIX_BYTES + CHECKSUM_BYTES) throw corrupt(`only ${bytes.length} bytes`);
  if ((bytes[0]! << 8) + bytes[1]! !== LEDGER_INDEX_MAGIC) throw corrupt('the magic is not 0x4c4f');
  const version = bytes[2] as number;
  if (version !== LEDGER_INDEX_VERSION && version !== LEDGER_INDEX_VERSION_BROKER_TIME_ONLY) {
    throw invalidArgument(
      OffsetIndexReason.OFFSET_INDEX_VERSION_UNKNOWN,
      `ledger index version ${bytes[2]} is not known`,
    );
  }
  const end = bytes.length - CHECKSUM_BYTES;
  const stored = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(end);
  if (crc32c(bytes.subarray(0, end)) !== stored) throw corrupt('the checksum does not match');
  return version;
}

function readHeader(next: () => number): LedgerIndexState {
  const entriesPerPoint = next();
  const bytesPerPoint = next();
  const firstOffset = next();
  const entryCount = next();
  const messageCount = next();
  const minTimestamp = next();
  const maxTimestamp = next();
  const entriesSincePoint = next();
  const bytesSincePoint = next();
  const pointCount = next();
  if (entriesPerPoint < 1 || entriesPerPoint > MAX_ENTRIES_PER_POINT) throw corrupt('entriesPerPoint out of range');
  if (bytesPerPoint < 1 || bytesPerPoint > MAX_BYTES_PER_POINT) throw corrupt('bytesPerPoint out of range');
  if (messageCount < entryCount || firstOffset + messageCount - 1 > MAX_OFFSET) throw corrupt('bad message count');
  if (pointCount > MAX_INDEX_POINTS || pointCount > entryCount || entryCount > 0 !== pointCount > 0) {
    throw corrupt(`${pointCount} points for ${entryCount} entries`);
  }
  if (minTimestamp > maxTimestamp || entriesSincePoint > entriesPerPoint || entriesSincePoint > entryCount) {
    throw corrupt('inconsistent header');
  }
  const empty = entryCount === 0;
  const state: LedgerIndexState = {
    entriesPerPoint,
    bytesPerPoint,
    firstOffset,
    entryCount,
    lastOffset: firstOffset + messageCount - 1,
    minTimestamp: empty ? -1 : minTimestamp,
    maxTimestamp: empty ? -1 : maxTimestamp,
    maxEventTime: -1,
    entriesSincePoint,
    bytesSincePoint,
    pointCount,
    pointEntryIds: new Float64Array(Math.max(pointCount, 1)),
    offsetsBefore: new Float64Array(Math.max(pointCount, 1)),
    maxTimestampsBefore: new Float64Array(Math.max(pointCount, 1)),
    maxEventTimesBefore: new Float64Array(Math.max(pointCount, 1)),
  };
  state.offsetsBefore[0] = firstOffset - 1;
  state.maxTimestampsBefore[0] = -1;
  state.maxEventTimesBefore[0] = -1;
  return state;
}

/**
 * Points must be strictly increasing in entry id and offset, at most
 * entriesPerPoint apart (so a range read stays bounded), and within the ledger.
 */
function checkPoints(state: LedgerIndexState): void {
  for (let point = 1; point < state.pointCount; point++) {
    const entryId = at(state.pointEntryIds, point);
    const offsetBefore = at(state.offsetsBefore, point);
    const gap = entryId - at(state.pointEntryIds, point - 1);
    if (gap <= 0 || gap > state.entriesPerPoint || entryId >= state.entryCount) {
      throw corrupt(`point ${point} is at entry ${entryId}`);
    }
    if (offsetBefore <= at(state.offsetsBefore, point - 1) || offsetBefore >= state.lastOffset) {
      throw corrupt(`point ${point} has offset ${offsetBefore}`);
    }
    if (offsetBefore - state.firstOffset + 1 < entryId) throw corrupt(`point ${point} has fewer offsets than entries`);
    if (at(state.maxTimestampsBefore, point) > state.maxTimestamp) throw corrupt(`point ${point} has a future time`);
    if (at(state.maxEventTimesBefore, point) > state.maxEventTime) {
      throw corrupt(`point ${point} has a future event time`);
    }
  }
  const lastPointEntry = state.pointCount > 0 ? at(state.pointEntryIds, state.pointCount - 1) : 0;
  if (state.pointCount > 0 && state.entryCount - lastPointEntry !== state.entriesSincePoint) {
    throw corrupt('entriesSincePoint does not match the last point');
  }
}

function at(values: Float64Array, position: number): number {
  return values[position] as number;
}

function corrupt(detail: string) {
  return invalidArgument(
    OffsetIndexReason.OFFSET_INDEX_CORRUPT,
    `the serialized ledger offset index is corrupt: ${detail}`,
  );
}
