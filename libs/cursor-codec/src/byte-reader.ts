import { malformed } from './errors.js';

const TWO_POW_32 = 4294967296;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A bounds-checked reader over untrusted bytes. Every read checks the length
 * first and fails with CURSOR_STATE_MALFORMED (INVALID_ARGUMENT) rather than
 * reading past the end. varint64 leaves its halves in `lo` and `hi` so that
 * hot loops do not allocate.
 */
export class ByteReader {
  position: number;
  end: number;
  lo = 0;
  hi = 0;

  constructor(
    readonly bytes: Uint8Array,
    start = 0,
    end = bytes.length,
  ) {
    this.position = start;
    this.end = end;
  }

  get remaining(): number {
    return this.end - this.position;
  }

  atEnd(): boolean {
    return this.position >= this.end;
  }

  private fail(what: string): never {
    throw malformed(`${what} at byte ${this.position}`);
  }

  byte(): number {
    if (this.position >= this.end) this.fail('unexpected end of data');
    return this.bytes[this.position++] ?? 0;
  }

  /** A varint that must fit a non-negative safe integer. */
  varint(): number {
    let value = 0;
    let scale = 1;
    for (let index = 0; index < 8; index++) {
      const byte = this.byte();
      value += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) {
        if (!Number.isSafeInteger(value)) this.fail('varint larger than 2^53');
        return value;
      }
      scale *= 128;
    }
    return this.fail('varint larger than 2^53');
  }

  /** A varint that must fit in 32 unsigned bits. */
  varint32(): number {
    const value = this.varint();
    if (value > 0xffffffff) this.fail('varint larger than 32 bits');
    return value;
  }

  /** A full 64-bit varint; the result is left in lo and hi. */
  varint64(): void {
    let lo = 0;
    let hi = 0;
    let shift = 0;
    for (; shift < 28; shift += 7) {
      const byte = this.byte();
      lo |= (byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) {
        this.lo = lo >>> 0;
        this.hi = 0;
        return;
      }
    }
    const middle = this.byte();
    lo |= (middle & 0x0f) << 28;
    hi = (middle & 0x70) >> 4;
    if ((middle & 0x80) === 0) {
      this.lo = lo >>> 0;
      this.hi = hi >>> 0;
      return;
    }
    for (shift = 3; shift <= 31; shift += 7) {
      const byte = this.byte();
      hi |= (byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) {
        this.lo = lo >>> 0;
        this.hi = hi >>> 0;
        return;
      }
    }
    this.fail('varint longer than 10 bytes');
  }

  /** A protobuf int64 that must be a safe integer >= min. */
  int64(min: number, what: string): number {
    this.varint64();
    const value = int64ToNumber(this.lo, this.hi);
    if (!(value >= min)) this.fail(`${what} ${bigintOf(this.lo, this.hi)} out of range`);
    return value;
  }

  /** A zigzag varint of a safe integer. */
  zigzag(): number {
    const raw = this.varint();
    return raw % 2 === 0 ? raw / 2 : -(raw + 1) / 2;
  }

  uint32LittleEndian(): number {
    if (this.remaining < 4) this.fail('unexpected end of data');
    const at = this.position;
    this.position += 4;
    return (
      ((this.bytes[at] ?? 0) |
        ((this.bytes[at + 1] ?? 0) << 8) |
        ((this.bytes[at + 2] ?? 0) << 16) |
        ((this.bytes[at + 3] ?? 0) << 24)) >>>
      0
    );
  }

  uint32BigEndian(): number {
    if (this.remaining < 4) this.fail('unexpected end of data');
    const at = this.position;
    this.position += 4;
    return (
      (((this.bytes[at] ?? 0) << 24) |
        ((this.bytes[at + 1] ?? 0) << 16) |
        ((this.bytes[at + 2] ?? 0) << 8) |
        (this.bytes[at + 3] ?? 0)) >>>
      0
    );
  }

  /** A view of the next `length` bytes. */
  take(length: number): Uint8Array {
    if (length > this.remaining) this.fail(`length ${length} past the end`);
    const view = this.bytes.subarray(this.position, this.position + length);
    this.position += length;
    return view;
  }

  /** Length-prefixed UTF-8; invalid UTF-8 is malformed. */
  string(): string {
    const bytes = this.take(this.varint());
    try {
      return utf8.decode(bytes);
    } catch {
      return this.fail('invalid UTF-8');
    }
  }

  /** A reader over the next `length` bytes (a length-delimited sub-message). */
  sub(length: number): ByteReader {
    if (length > this.remaining) this.fail(`length ${length} past the end`);
    const reader = new ByteReader(this.bytes, this.position, this.position + length);
    this.position += length;
    return reader;
  }
}

/** The value of an int64 given as two's-complement halves, or NaN when it is not a safe integer. */
export function int64ToNumber(lo: number, hi: number): number {
  if (hi < 0x200000) return hi * TWO_POW_32 + lo;
  if (hi < 0x80000000) return Number.NaN;
  const negativeLo = (~lo + 1) >>> 0;
  const negativeHi = (~hi + (negativeLo === 0 ? 1 : 0)) >>> 0;
  if (negativeHi >= 0x200000) return Number.NaN;
  return -(negativeHi * TWO_POW_32 + negativeLo);
}

/** The signed 64-bit value of two's-complement halves. */
export function bigintOf(lo: number, hi: number): bigint {
  return BigInt.asIntN(64, (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0));
}
