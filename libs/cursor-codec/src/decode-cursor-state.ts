import { readCompact } from './compact-reader.js';
import { COMPACT_MAGIC } from './compact-writer.js';
import type { CursorState } from './cursor-state.js';
import type { CursorStateFormat } from './encode-cursor-state.js';
import { checkIntegerOption, malformed } from './errors.js';
import { positionInfoUsesLongArray, readPositionInfo } from './position-info-reader.js';

export const DEFAULT_MAX_DECODED_BODY_BYTES = 1 << 30;

export interface DecodeCursorStateOptions {
  /** Largest compact body accepted after inflating (a bound against deflate bombs). Default 1 GiB. */
  maxBodyBytes?: number;
}

/**
 * Decodes a cursor state in any format this package writes, and any
 * PositionInfo Pulsar writes. The format is recognised from the bytes: the
 * compact format starts with its magic byte, which no protobuf message can
 * start with; anything else is read as a PositionInfo. Bad bytes fail with
 * CURSOR_STATE_MALFORMED (INVALID_ARGUMENT), never with garbage.
 */
export function decodeCursorState(bytes: Uint8Array, options: DecodeCursorStateOptions = {}): CursorState {
  if (!(bytes instanceof Uint8Array)) throw malformed('cursor state must be a Uint8Array');
  if (bytes.length === 0) throw malformed('empty cursor state');
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_DECODED_BODY_BYTES;
  checkIntegerOption(maxBodyBytes, 'maxBodyBytes', 1, 2 ** 32);
  return bytes[0] === COMPACT_MAGIC ? readCompact(bytes, maxBodyBytes) : readPositionInfo(bytes);
}

/**
 * The format of encoded bytes, without decoding the acknowledgements. A
 * PositionInfo with neither field 3 nor field 6 reads as pulsar-ranges.
 */
export function detectCursorStateFormat(bytes: Uint8Array): CursorStateFormat {
  if (bytes.length === 0) throw malformed('empty cursor state');
  if (bytes[0] === COMPACT_MAGIC) return 'compact';
  return positionInfoUsesLongArray(bytes) ? 'long-array' : 'pulsar-ranges';
}
