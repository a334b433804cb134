import { LedgerlineError, invalidArgument } from '@ledgerline/errors';
import { decodeEntry } from './entry-framing.js';
import { decodeLedgerIndex, encodeLedgerIndex, type LedgerIndexState } from './ledger-index-codec.js';
import { checkIntegerIn, checkOffset, checkedSpacing, type LedgerIndexOptions } from './index-options.js';
import { MAX_INDEX_POINTS, MAX_OFFSET } from './limits.js';
import type { StoredEntry } from './positions.js';
import { OffsetIndexReason } from './errors.js';

/** The entries of one ledger that one range read fetches, and the offset of the first message in them. */
export interface LedgerRange {
  firstEntryId: number;
  lastEntryId: number;
  firstOffset: number;
}

/**
 * A sparse index over one ledger. Point i sits at entry `pointEntryIds[i]`
 * and records what lies BEFORE that entry: the last offset written
 * (`offsetsBefore`) and the largest broker timestamp seen (`maxTimestampsBefore`).
 * Both are non-decreasing, so a binary search finds the one segment between two
 * points that holds an offset, or the first entry whose timestamp reaches a time.
 *
 * Broker clocks can go back, so timestamps inside a ledger may decrease. The
 * index keeps a running maximum instead of the raw values: a lookup by time
 * answers "the first entry whose broker timestamp is >= t", which the running
 * maximum locates exactly (the first entry where the running maximum reaches t
 * is the first entry whose own timestamp reaches t).
 *
 * Beside it, the same running maximum over each entry's event-time key (its
 * largest event time when the publisher gave one, else its broker
 * timestamp), `maxEventTimesBefore`, locates the first entry whose messages
 * may reach a time by their own timestamps (Kafka's CreateTime lookup).
 */
export class LedgerOffsetIndex {
  private readonly state: LedgerIndexState;

  /** An empty index for a ledger whose first message will have offset `options.firstOffset`. */
  constructor(options: LedgerIndexOptions) {
    checkOffset(options?.firstOffset, 'firstOffset');
    const spacing = checkedSpacing(options);
    this.state = {
      ...spacing,
      firstOffset: options.firstOffset,
      entryCount: 0,
      lastOffset: options.firstOffset - 1,
      minTimestamp: -1,
      maxTimestamp: -1,
      maxEventTime: -1,
      entriesSincePoint: 0,
      bytesSincePoint: 0,
      pointCount: 0,
      pointEntryIds: new Float64Array(16),
      offsetsBefore: new Float64Array(16),
      maxTimestampsBefore: new Float64Array(16),
      maxEventTimesBefore: new Float64Array(16),
    };
  }

  /** Builds an index from a ledger's entries (ids 0, 1, 2, ... in order), for a ledger whose index went missing. */
  static rebuild(entries: Iterable<StoredEntry>, options: LedgerIndexOptions): LedgerOffsetIndex {
    const index = new LedgerOffsetIndex(options);
    for (const entry of entries) {
      if (entry.entryId !== index.entryCount) {
        throw invalidArgument(
          OffsetIndexReason.ENTRIES_NOT_CONSECUTIVE,
          `rebuilding a ledger index needs entries 0, 1, 2, ... in order; got entry ${entry.entryId} where ${index.entryCount} was expected`,
        );
      }
      const { metadata } = decodeEntry(entry.data);
      if (metadata?.index === undefined || metadata.brokerTimestamp === undefined) {
        throw new LedgerlineError(
          'FAILED_PRECONDITION',
          OffsetIndexReason.ENTRY_WITHOUT_OFFSET,
          `entry ${entry.entryId} carries no broker timestamp and index, so the ledger cannot be indexed by offset`,
        );
      }
      index.append(metadata.index, metadata.brokerTimestamp, entry.data.length, metadata.maxEventTimeMs);
    }
    return index;
  }

  /** Reads an index written by `serialize`; corrupt bytes are INVALID_ARGUMENT / OFFSET_INDEX_CORRUPT. */
  static deserialize(bytes: Uint8Array): LedgerOffsetIndex {
    return LedgerOffsetIndex.fromState(decodeLedgerIndex(bytes));
  }

  /** Restores an index from its fields (used by deserialization, which has checked them). */
  private static fromState(state: LedgerIndexState): LedgerOffsetIndex {
    const index = new LedgerOffsetIndex(state);
    Object.assign(index.state, state);
    return index;
  }

  get entryCount(): number {
    return this.state.entryCount;
  }
  get firstOffset(): number {
    return this.state.firstOffset;
  }
  /** The offset of the last message indexed; firstOffset - 1 while the ledger is empty. */
  get lastOffset(): number {
    return this.state.lastOffset;
  }
  /** The smallest broker timestamp indexed; -1 while empty. */
  get minTimestamp(): number {
    return this.state.minTimestamp;
  }
  /** The largest broker timestamp indexed; -1 while empty. */
  get maxTimestamp(): number {
    return this.state.maxTimestamp;
  }
  /** The largest event-time key indexed (an entry's largest event time, or its broker timestamp); -1 while empty. */
  get maxEventTime(): number {
    return this.state.maxEventTime;
  }
  get pointCount(): number {
    return this.state.pointCount;
  }
  get entriesPerPoint(): number {
    return this.state.entriesPerPoint;
  }
  get bytesPerPoint(): number {
    return this.state.bytesPerPoint;
  }

  /** The compact binary form stored beside a closed ledger (magic, version, delta varints, crc32c). */
  serialize(): Uint8Array {
    return encodeLedgerIndex(this.state);
  }

  /**
   * Records the next entry of the ledger (entry id `entryCount`): `index` is
   * the offset of its last message, `sizeBytes` its stored size,
   * `maxEventTimeMs` the largest event time of its messages when its
   * publisher gave one (its broker timestamp stands in otherwise).
   */
  append(index: number, brokerTimestamp: number, sizeBytes: number, maxEventTimeMs?: number): void {
    const state = this.state;
    checkOffset(index, 'index');
    checkIntegerIn(brokerTimestamp, 0, MAX_OFFSET, 'brokerTimestamp', OffsetIndexReason.INVALID_BROKER_TIMESTAMP);
    const eventTime = maxEventTimeMs ?? brokerTimestamp;
    checkIntegerIn(eventTime, 0, MAX_OFFSET, 'maxEventTimeMs', OffsetIndexReason.INVALID_TIMESTAMP);
    checkIntegerIn(sizeBytes, 0, MAX_OFFSET, 'sizeBytes', OffsetIndexReason.INVALID_ENTRY_SIZE);
    if (index <= state.lastOffset) {
      throw invalidArgument(
        OffsetIndexReason.OFFSET_NOT_INCREASING,
        `entry ${state.entryCount} has index ${index}, but the ledger already reached offset ${state.lastOffset}`,
      );
    }
    const pointDue =
      state.entryCount === 0 ||
      state.entriesSincePoint >= state.entriesPerPoint ||
      state.bytesSincePoint >= state.bytesPerPoint;
    if (pointDue) this.addPoint();
    state.entriesSincePoint += 1;
    state.bytesSincePoint += sizeBytes;
    state.entryCount += 1;
    state.lastOffset = index;
    state.minTimestamp = state.minTimestamp < 0 ? brokerTimestamp : Math.min(state.minTimestamp, brokerTimestamp);
    state.maxTimestamp = Math.max(state.maxTimestamp, brokerTimestamp);
    state.maxEventTime = Math.max(state.maxEventTime, eventTime);
  }

  /** The range of entries holding `offset`, or undefined when the ledger does not hold it. */
  locateOffset(offset: number): LedgerRange | undefined {
    const state = this.state;
    if (offset < state.firstOffset || offset > state.lastOffset) return undefined;
    return this.rangeOfPoint(lastPointBelow(state.offsetsBefore, state.pointCount, offset));
  }

  /**
   * The range of entries holding the first entry whose broker timestamp is
   * >= `timestampMs`, or undefined when no entry of the ledger reaches it.
   */
  locateTime(timestampMs: number): LedgerRange | undefined {
    const state = this.state;
    if (state.entryCount === 0 || timestampMs > state.maxTimestamp) return undefined;
    return this.rangeOfPoint(lastPointBelow(state.maxTimestampsBefore, state.pointCount, timestampMs));
  }

  /**
   * The range of entries holding the first entry whose event-time key (its
   * largest event time, or its broker timestamp when it has none) is >=
   * `timestampMs`, or undefined when no entry of the ledger reaches it.
   */
  locateEventTime(timestampMs: number): LedgerRange | undefined {
    const state = this.state;
    if (state.entryCount === 0 || timestampMs > state.maxEventTime) return undefined;
    return this.rangeOfPoint(lastPointBelow(state.maxEventTimesBefore, state.pointCount, timestampMs));
  }

  private rangeOfPoint(point: number): LedgerRange {
    const state = this.state;
    const next = point + 1;
    return {
      firstEntryId: state.pointEntryIds[point] as number,
      lastEntryId: next < state.pointCount ? (state.pointEntryIds[next] as number) - 1 : state.entryCount - 1,
      firstOffset: (state.offsetsBefore[point] as number) + 1,
    };
  }

  private addPoint(): void {
    const state = this.state;
    if (state.pointCount >= MAX_INDEX_POINTS) {
      throw new LedgerlineError(
        'RESOURCE_EXHAUSTED',
        OffsetIndexReason.OFFSET_INDEX_TOO_LARGE,
        `a ledger index holds at most ${MAX_INDEX_POINTS} points; roll the ledger sooner or space the points wider`,
      );
    }
    if (state.pointCount === state.pointEntryIds.length) this.grow();
    state.pointEntryIds[state.pointCount] = state.entryCount;
    state.offsetsBefore[state.pointCount] = state.lastOffset;
    state.maxTimestampsBefore[state.pointCount] = state.maxTimestamp;
    state.maxEventTimesBefore[state.pointCount] = state.maxEventTime;
    state.pointCount += 1;
    state.entriesSincePoint = 0;
    state.bytesSincePoint = 0;
  }

  private grow(): void {
    const state = this.state;
    const capacity = Math.min(state.pointEntryIds.length * 2, MAX_INDEX_POINTS);
    state.pointEntryIds = grown(state.pointEntryIds, capacity);
    state.offsetsBefore = grown(state.offsetsBefore, capacity);
    state.maxTimestampsBefore = grown(state.maxTimestampsBefore, capacity);
    state.maxEventTimesBefore = grown(state.maxEventTimesBefore, capacity);
  }
}

function grown(values: Float64Array, capacity: number): Float64Array {
  const next = new Float64Array(capacity);
  next.set(values);
  return next;
}

/**
 * The last point whose key is strictly below `target`. Keys are
 * non-decreasing and the caller has made sure point 0 qualifies (its keys are
 * firstOffset - 1 and -1, below any target it passes).
 */
function lastPointBelow(keys: Float64Array, count: number, target: number): number {
  let low = 0;
  let high = count - 1;
  while (low < high) {
    const middle = (low + high + 1) >>> 1;
    if ((keys[middle] as number) < target) low = middle;
    else high = middle - 1;
  }
  return low;
}
