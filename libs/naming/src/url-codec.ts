import { namingError, quote, NamingErrorReason } from './naming-error.js';

// Java's URLEncoder leaves exactly these unencoded: ASCII letters, digits and `.-*_`.
const UNRESERVED = new Uint8Array(128);
for (const char of 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-*_') {
  UNRESERVED[char.charCodeAt(0)] = 1;
}

const ALL_UNRESERVED = /^[A-Za-z0-9.*_-]*$/;

const PERCENT_BYTE: string[] = Array.from(
  { length: 256 },
  (_, byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
);

const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Java's `URLEncoder.encode(s, UTF_8)`: letters, digits and `.-*_` stay, a space
 * becomes `+`, every other character becomes its UTF-8 bytes as upper-case
 * `%XX`. So `$` and `/` are always encoded, which keeps a bucket segment `$<b>`
 * apart from every topic. A lone surrogate has no UTF-8 form (Java silently
 * writes `?` for it), so it is rejected instead.
 */
export function encodeLocalName(localName: string): string {
  if (typeof localName !== 'string') {
    throw namingError(
      NamingErrorReason.INVALID_TOPIC_NAME,
      `a topic local name must be a string, got ${quote(localName)}`,
    );
  }
  // Most topic names need no encoding at all; skip building a new string for them.
  if (ALL_UNRESERVED.test(localName)) return localName;
  let out = '';
  for (let index = 0; index < localName.length; index++) {
    const unit = localName.charCodeAt(index);
    if (unit < 0x80) {
      out += UNRESERVED[unit] === 1 ? localName[index] : unit === 0x20 ? '+' : PERCENT_BYTE[unit];
    } else if (unit < 0x800) {
      out += PERCENT_BYTE[0xc0 | (unit >> 6)]! + PERCENT_BYTE[0x80 | (unit & 0x3f)]!;
    } else if (unit < 0xd800 || unit > 0xdfff) {
      out +=
        PERCENT_BYTE[0xe0 | (unit >> 12)]! +
        PERCENT_BYTE[0x80 | ((unit >> 6) & 0x3f)]! +
        PERCENT_BYTE[0x80 | (unit & 0x3f)]!;
    } else {
      out += encodeSurrogatePair(localName, index);
      index++;
    }
  }
  return out;
}

function encodeSurrogatePair(value: string, index: number): string {
  const high = value.charCodeAt(index);
  const low = index + 1 < value.length ? value.charCodeAt(index + 1) : 0;
  if (high > 0xdbff || low < 0xdc00 || low > 0xdfff) {
    throw namingError(
      NamingErrorReason.INVALID_TOPIC_NAME,
      `topic local name ${quote(value)} has a lone UTF-16 surrogate at index ${index}`,
    );
  }
  const codePoint = 0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00);
  return (
    PERCENT_BYTE[0xf0 | (codePoint >> 18)]! +
    PERCENT_BYTE[0x80 | ((codePoint >> 12) & 0x3f)]! +
    PERCENT_BYTE[0x80 | ((codePoint >> 6) & 0x3f)]! +
    PERCENT_BYTE[0x80 | (codePoint & 0x3f)]!
  );
}

/**
 * Java's `URLDecoder.decode(s, UTF_8)`: `+` is a space, each run of `%XX`
 * escapes (either hex case) is decoded as UTF-8, and every other character
 * stands for itself. Where Java would throw (a bad or cut-off escape) this throws
 * INVALID_ENCODED_NAME; where Java would silently write U+FFFD (bytes that are
 * not UTF-8) this throws too, so a decoded name is always what was encoded.
 */
export function decodeLocalName(encoded: string): string {
  if (typeof encoded !== 'string') {
    throw namingError(
      NamingErrorReason.INVALID_ENCODED_NAME,
      `an encoded name must be a string, got ${quote(encoded)}`,
    );
  }
  let out = '';
  let index = 0;
  while (index < encoded.length) {
    // Copy the literal stretch up to the next escape in one piece.
    const percent = encoded.indexOf('%', index);
    const literalEnd = percent === -1 ? encoded.length : percent;
    out += encoded.slice(index, literalEnd).replaceAll('+', ' ');
    if (percent === -1) break;
    const end = escapeRunEnd(encoded, percent);
    out += decodeEscapeRun(encoded, percent, end);
    index = end;
  }
  return out;
}

// The index just past a run of consecutive `%XX` escapes starting at `start`
// (past the end of the string when the last escape is cut off; the caller
// rejects that escape).
function escapeRunEnd(encoded: string, start: number): number {
  let index = start;
  while (index < encoded.length && encoded.charCodeAt(index) === 0x25) index += 3;
  return index;
}

function decodeEscapeRun(encoded: string, start: number, end: number): string {
  const bytes = new Uint8Array((end - start) / 3);
  let ascii = true;
  for (let index = start, byte = 0; index < end; index += 3, byte++) {
    const value = hexByte(encoded, index + 1);
    if (value < 0) {
      throw namingError(
        NamingErrorReason.INVALID_ENCODED_NAME,
        `encoded name ${quote(encoded)} has a bad escape at index ${index}`,
      );
    }
    bytes[byte] = value;
    if (value >= 0x80) ascii = false;
  }
  // ASCII bytes are their own characters; only multi-byte sequences need the UTF-8 decoder.
  if (ascii) {
    let text = '';
    for (const byte of bytes) text += String.fromCharCode(byte);
    return text;
  }
  try {
    return utf8Decoder.decode(bytes);
  } catch (cause) {
    throw namingError(
      NamingErrorReason.INVALID_ENCODED_NAME,
      `encoded name ${quote(encoded)} has escapes at index ${start} that are not UTF-8 (${String(cause)})`,
    );
  }
}

// The byte written as two hex digits (either case) at `index`, or -1 when they are not hex digits.
function hexByte(encoded: string, index: number): number {
  const high = hexDigit(encoded.charCodeAt(index));
  const low = hexDigit(encoded.charCodeAt(index + 1));
  return high < 0 || low < 0 ? -1 : (high << 4) | low;
}

function hexDigit(unit: number): number {
  if (unit >= 0x30 && unit <= 0x39) return unit - 0x30;
  if (unit >= 0x41 && unit <= 0x46) return unit - 0x37;
  if (unit >= 0x61 && unit <= 0x66) return unit - 0x57;
  return -1;
}
