import type { AckSet } from './ack-set.js';
import { writeCompact, type CompactCompression } from './compact-writer.js';
import { validateCursorState, type CursorState } from './cursor-state.js';
import { CursorCodecReason, checkIntegerOption, invalidOption, tooLarge } from './errors.js';
import { LedgerlineError } from '@ledgerline/errors';
import { LONG_ARRAY_MAX_ENTRY_ID } from './long-array.js';
import {
  planPositionInfo,
  writePositionInfo,
  type PositionInfoParts,
  type PositionInfoPlan,
} from './position-info-writer.js';

export type CursorStateFormat = 'pulsar-ranges' | 'long-array' | 'compact';
export const CURSOR_STATE_FORMATS: readonly CursorStateFormat[] = ['pulsar-ranges', 'long-array', 'compact'];

export const DEFAULT_MAX_RANGES_TO_PERSIST = 10_000_000;
export const DEFAULT_MAX_BATCH_ACKS_TO_PERSIST = 200_000;
export const DEFAULT_MAX_ENCODED_BYTES = 1 << 30;

export interface EncodeCursorStateOptions {
  /** 'auto' (the default) picks the smallest format that loses nothing the others keep. */
  format?: CursorStateFormat | 'auto';
  /** Ranges beyond the first N (in position order) are not persisted. Default 10,000,000; 0 persists none. */
  maxRangesToPersist?: number;
  /** Partly acknowledged batch entries beyond the first N are not persisted. Default 200,000. */
  maxBatchAcksToPersist?: number;
  /** An encoding larger than this fails with SNAPSHOT_TOO_LARGE (RESOURCE_EXHAUSTED). Default 1 GiB. */
  maxEncodedBytes?: number;
  /** Whether the compact format deflates its body: 'auto' (default) when that is smaller. */
  compactCompression?: CompactCompression;
}

/** What an encoding left out, so a caller can warn and count it. */
export interface CursorStateEncodingReport {
  format: CursorStateFormat;
  /** Ranges persisted (at most maxRangesToPersist). */
  rangesPersisted: number;
  /** Ranges not persisted because of maxRangesToPersist; their acks are redelivered after a restart. */
  rangesDropped: number;
  /** Batch entries whose index acks were not persisted because of maxBatchAcksToPersist. */
  batchAcksDropped: number;
  /**
   * cursorProperties not written: the Pulsar formats have no field for them
   * (Pulsar keeps them in ManagedCursorInfo field 8). Always 0 for compact.
   */
  cursorPropertiesOmitted: number;
  /** True when nothing at all was dropped or omitted. */
  complete: boolean;
}

/**
 * The encoded bytes, which carry the report of everything that was not
 * persisted. It is a Uint8Array (over the same memory, no copy), so it goes
 * wherever bytes go, while nothing is ever dropped without showing here.
 */
export class EncodedCursorState extends Uint8Array implements CursorStateEncodingReport {
  // Slices and maps of it are plain bytes, without a report that would not describe them.
  static get [Symbol.species](): Uint8ArrayConstructor {
    return Uint8Array;
  }

  format: CursorStateFormat = 'compact';
  rangesPersisted = 0;
  rangesDropped = 0;
  batchAcksDropped = 0;
  cursorPropertiesOmitted = 0;
  complete = true;

  static wrap(bytes: Uint8Array, report: CursorStateEncodingReport): EncodedCursorState {
    const encoded = new EncodedCursorState(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.byteLength);
    return Object.assign(encoded, report);
  }

  /** The bytes themselves; kept for callers that read `.bytes` off the result. */
  get bytes(): Uint8Array {
    return this;
  }

  /** The report alone, as a plain object (for logs and metrics). */
  report(): CursorStateEncodingReport {
    const { format, rangesPersisted, rangesDropped, batchAcksDropped, cursorPropertiesOmitted, complete } = this;
    return { format, rangesPersisted, rangesDropped, batchAcksDropped, cursorPropertiesOmitted, complete };
  }
}

interface Prepared {
  parts: PositionInfoParts;
  cursorProperties: (readonly [string, string])[];
  rangesDropped: number;
  batchAcksDropped: number;
}

/**
 * Encodes a cursor state in one format, or in the smallest one ('auto').
 * Ranges past maxRangesToPersist and batch entries past maxBatchAcksToPersist
 * are cut (the first ones in position order are kept, as Pulsar does) and
 * counted in the result, which is the encoded bytes themselves.
 */
export function encodeCursorState(state: CursorState, options: EncodeCursorStateOptions = {}): EncodedCursorState {
  const format = options.format ?? 'auto';
  if (format !== 'auto' && !CURSOR_STATE_FORMATS.includes(format)) {
    throw invalidOption(`format must be one of auto, ${CURSOR_STATE_FORMATS.join(', ')}; got ${String(format)}`);
  }
  const compression = options.compactCompression ?? 'auto';
  if (!['auto', 'none', 'deflate'].includes(compression)) {
    throw invalidOption(`compactCompression must be auto, none or deflate; got ${String(compression)}`);
  }
  const maxEncodedBytes = options.maxEncodedBytes ?? DEFAULT_MAX_ENCODED_BYTES;
  checkIntegerOption(maxEncodedBytes, 'maxEncodedBytes', 16, 2 ** 32);
  const prepared = prepare(state, options);
  const { format: chosen, bytes } =
    format === 'auto'
      ? encodeSmallest(prepared, compression, maxEncodedBytes)
      : encodeAs(format, prepared, compression, maxEncodedBytes);
  const cursorPropertiesOmitted = chosen === 'compact' ? 0 : prepared.cursorProperties.length;
  return EncodedCursorState.wrap(bytes, {
    format: chosen,
    rangesPersisted: prepared.parts.acked.rangeCount(),
    rangesDropped: prepared.rangesDropped,
    batchAcksDropped: prepared.batchAcksDropped,
    cursorPropertiesOmitted,
    complete: prepared.rangesDropped === 0 && prepared.batchAcksDropped === 0 && cursorPropertiesOmitted === 0,
  });
}

function prepare(state: CursorState, options: EncodeCursorStateOptions): Prepared {
  const maxRanges = options.maxRangesToPersist ?? DEFAULT_MAX_RANGES_TO_PERSIST;
  const maxBatches = options.maxBatchAcksToPersist ?? DEFAULT_MAX_BATCH_ACKS_TO_PERSIST;
  checkIntegerOption(maxRanges, 'maxRangesToPersist', 0, Number.MAX_SAFE_INTEGER);
  checkIntegerOption(maxBatches, 'maxBatchAcksToPersist', 0, Number.MAX_SAFE_INTEGER);
  const batches = validateCursorState(state);
  const { kept, dropped } = state.acked.keepFirstRanges(maxRanges);
  return {
    parts: {
      markDelete: state.markDelete,
      acked: kept,
      properties: [...state.properties],
      batches: batches.slice(0, maxBatches),
    },
    cursorProperties: [...state.cursorProperties],
    rangesDropped: dropped,
    batchAcksDropped: Math.max(0, batches.length - maxBatches),
  };
}

function encodeAs(
  format: CursorStateFormat,
  prepared: Prepared,
  compression: CompactCompression,
  maxEncodedBytes: number,
): { format: CursorStateFormat; bytes: Uint8Array } {
  if (format === 'compact') {
    const bytes = writeCompact({ ...prepared.parts, cursorProperties: prepared.cursorProperties }, compression);
    if (bytes.length > maxEncodedBytes) throw tooLargeError(format, bytes.length, maxEncodedBytes);
    return { format, bytes };
  }
  if (format === 'long-array') checkLongArrayApplies(prepared.parts.acked);
  // Size first, so an oversized PositionInfo is refused before it is allocated.
  const plan = planPositionInfo(prepared.parts, format);
  if (plan.size > maxEncodedBytes) throw tooLargeError(format, plan.size, maxEncodedBytes);
  return { format, bytes: writePositionInfo(plan) };
}

/**
 * The compact encoding is always computed; the two Pulsar layouts are sized
 * without being written, and one of them is written only if it is smaller.
 * Formats that would omit cursorProperties are not candidates when there are
 * any. On a tie the more compatible format wins (pulsar-ranges, long-array).
 */
function encodeSmallest(
  prepared: Prepared,
  compression: CompactCompression,
  maxEncodedBytes: number,
): { format: CursorStateFormat; bytes: Uint8Array } {
  const compact = writeCompact({ ...prepared.parts, cursorProperties: prepared.cursorProperties }, compression);
  let best: PositionInfoPlan | undefined;
  let bestSize = compact.length;
  if (prepared.cursorProperties.length === 0) {
    const candidates: ('long-array' | 'pulsar-ranges')[] = ['long-array', 'pulsar-ranges'];
    for (const layout of candidates) {
      if (layout === 'long-array' && !longArrayApplies(prepared.parts.acked)) continue;
      // A cheap lower bound skips the exact sizing (a pass over every range or word) when it cannot win.
      if (minimumAckBytes(prepared.parts.acked, layout) > bestSize) continue;
      const plan = planPositionInfo(prepared.parts, layout);
      if (plan.size <= bestSize) {
        best = plan;
        bestSize = plan.size;
      }
    }
  }
  const format = best?.layout ?? 'compact';
  if (bestSize > maxEncodedBytes) throw tooLargeError(format, bestSize, maxEncodedBytes);
  return { format, bytes: best === undefined ? compact : writePositionInfo(best) };
}

/** Fewest bytes the acknowledgements can take in a Pulsar layout (14 per range; 2 per bitset word). */
function minimumAckBytes(acked: AckSet, layout: 'long-array' | 'pulsar-ranges'): number {
  if (layout === 'pulsar-ranges') return acked.rangeCount() * 14;
  let words = 0;
  for (const ledgerId of acked.ledgerIds()) words += Math.floor((acked.ledger(ledgerId)?.lastEntry() ?? 0) / 64) + 1;
  return words * 2;
}

function longArrayApplies(acked: AckSet): boolean {
  for (const ledgerId of acked.ledgerIds()) {
    const last = acked.ledger(ledgerId)?.lastEntry() ?? 0;
    if (last > LONG_ARRAY_MAX_ENTRY_ID) return false;
  }
  return true;
}

function checkLongArrayApplies(acked: AckSet): void {
  if (!longArrayApplies(acked)) {
    throw new LedgerlineError(
      'INVALID_ARGUMENT',
      CursorCodecReason.FORMAT_NOT_APPLICABLE,
      `long-array holds entry ids up to ${LONG_ARRAY_MAX_ENTRY_ID} (Pulsar indexes its BitSet by int); use compact or pulsar-ranges`,
    );
  }
}

function tooLargeError(format: CursorStateFormat, size: number, limit: number): LedgerlineError {
  return tooLarge(`the ${format} encoding takes ${size} bytes, over maxEncodedBytes ${limit}`, {
    format,
    sizeBytes: String(size),
    maxEncodedBytes: String(limit),
  });
}
