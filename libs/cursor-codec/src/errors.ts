import { LedgerlineError, invalidArgument } from '@ledgerline/errors';

/** Stable reasons this package throws with, for programs to branch on. */
export const CursorCodecReason = {
  /**
   * A position that is missing, or whose ledger id is not a safe integer >= 0 or
   * whose entry id is not one >= -1 (>= 0 where it must name an entry: acks,
   * nacks), or a reversed range.
   */
  INVALID_POSITION: 'INVALID_POSITION',
  /** A request carrying more than a data-path limit allows (DATA_PATH_LIMITS; details: limit, max, sent). */
  LIMIT_EXCEEDED: 'LIMIT_EXCEEDED',
  /** A CursorState that cannot be encoded (bad batch acks, properties, options). */
  INVALID_CURSOR_STATE: 'INVALID_CURSOR_STATE',
  /** An option outside its documented bounds. */
  INVALID_CODEC_OPTION: 'INVALID_CODEC_OPTION',
  /** The requested format cannot represent this state (long-array past entry 2^31 - 1). */
  FORMAT_NOT_APPLICABLE: 'FORMAT_NOT_APPLICABLE',
  /** Bytes that are not a cursor state in any known format, or are truncated or inconsistent. */
  CURSOR_STATE_MALFORMED: 'CURSOR_STATE_MALFORMED',
  /** A compact encoding written by a newer version of this codec. */
  CURSOR_STATE_UNSUPPORTED_VERSION: 'CURSOR_STATE_UNSUPPORTED_VERSION',
  /** An encoded state or a chunked snapshot larger than its configured limit. */
  SNAPSHOT_TOO_LARGE: 'SNAPSHOT_TOO_LARGE',
  /** A snapshot whose checksum or chunk sequence does not verify. */
  CURSOR_SNAPSHOT_CORRUPT: 'CURSOR_SNAPSHOT_CORRUPT',
  /** A non-empty cursor ledger without any complete snapshot within the scan bound. */
  CURSOR_SNAPSHOT_NOT_FOUND: 'CURSOR_SNAPSHOT_NOT_FOUND',
} as const;

export function invalidPosition(message: string): LedgerlineError {
  return invalidArgument(CursorCodecReason.INVALID_POSITION, message);
}

export function invalidState(message: string): LedgerlineError {
  return invalidArgument(CursorCodecReason.INVALID_CURSOR_STATE, message);
}

export function invalidOption(message: string): LedgerlineError {
  return invalidArgument(CursorCodecReason.INVALID_CODEC_OPTION, message);
}

export function malformed(message: string): LedgerlineError {
  return invalidArgument(CursorCodecReason.CURSOR_STATE_MALFORMED, message);
}

export function tooLarge(message: string, details?: Record<string, string>): LedgerlineError {
  return new LedgerlineError('RESOURCE_EXHAUSTED', CursorCodecReason.SNAPSHOT_TOO_LARGE, message, {
    ...(details === undefined ? {} : { details }),
  });
}

/** Checks that a ledger or entry id is a non-negative safe integer. */
export function checkId(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw invalidPosition(`${what} must be a non-negative safe integer, got ${String(value)}`);
  }
}

/** Checks that an option is an integer within [min, max]. */
export function checkIntegerOption(value: number, name: string, min: number, max: number): void {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw invalidOption(`${name} must be an integer in [${min}, ${max}], got ${String(value)}`);
  }
}
