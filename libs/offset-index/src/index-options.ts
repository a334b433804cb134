import { invalidArgument } from '@ledgerline/errors';
import {
  DEFAULT_BYTES_PER_POINT,
  DEFAULT_ENTRIES_PER_POINT,
  MAX_BYTES_PER_POINT,
  MAX_ENTRIES_PER_POINT,
  MAX_OFFSET,
} from './limits.js';
import { OffsetIndexReason } from './errors.js';

/** How sparse a ledger index is: a point every `entriesPerPoint` entries or `bytesPerPoint` bytes. */
export interface IndexSpacing {
  /** At most this many entries between two points, so one range read fetches at most this many. */
  entriesPerPoint?: number;
  /** A new point once the entries since the last one hold this many bytes (Kafka's index.interval.bytes). */
  bytesPerPoint?: number;
}

export interface LedgerIndexOptions extends IndexSpacing {
  /** The offset of the first message of the ledger's first entry (the previous ledger's last offset + 1). */
  firstOffset: number;
}

export function checkedSpacing(spacing: IndexSpacing | undefined): Required<IndexSpacing> {
  const entriesPerPoint = spacing?.entriesPerPoint ?? DEFAULT_ENTRIES_PER_POINT;
  const bytesPerPoint = spacing?.bytesPerPoint ?? DEFAULT_BYTES_PER_POINT;
  checkIntegerIn(entriesPerPoint, 1, MAX_ENTRIES_PER_POINT, 'entriesPerPoint', OffsetIndexReason.INVALID_INDEX_SPACING);
  checkIntegerIn(bytesPerPoint, 1, MAX_BYTES_PER_POINT, 'bytesPerPoint', OffsetIndexReason.INVALID_INDEX_SPACING);
  return { entriesPerPoint, bytesPerPoint };
}

export function checkOffset(value: unknown, name: string, reason = 'INVALID_OFFSET'): asserts value is number {
  checkIntegerIn(value, 0, MAX_OFFSET, name, reason);
}

export function checkIntegerIn(value: unknown, min: number, max: number, name: string, reason: string): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw invalidArgument(reason, `${name} must be an integer from ${min} to ${max}, got ${String(value)}`, {
      field: name,
    });
  }
}
