const TWO_POW_32 = 4294967296;

/** Bytes a varint of a non-negative safe integer takes. */
export function varintSize(value: number): number {
  if (value < 0x80) return 1;
  if (value < 0x4000) return 2;
  if (value < 0x200000) return 3;
  if (value < 0x10000000) return 4;
  let size = 4;
  let rest = Math.floor(value / 0x10000000);
  while (rest > 0) {
    size++;
    rest = Math.floor(rest / 128);
  }
  return size;
}

/** Bytes a protobuf int64 varint of a safe integer takes (negative numbers take 10). */
export function int64Size(value: number): number {
  return value < 0 ? 10 : varintSize(value);
}

/** Bytes a varint of the 64-bit value (lo, hi) takes. */
export function varint64Size(lo: number, hi: number): number {
  if (hi === 0) return varintSize(lo);
  // Seven bits a byte over the significant bits (32 from lo plus those of hi).
  return Math.ceil((64 - Math.clz32(hi)) / 7);
}

/** Splits a safe integer (possibly negative) into the two's-complement halves of an int64. */
export function splitInt64(value: number): { lo: number; hi: number } {
  const hi = Math.floor(value / TWO_POW_32);
  return { lo: (value - hi * TWO_POW_32) >>> 0, hi: hi >>> 0 };
}

/**
 * An append-only byte buffer that grows by doubling. `exact` preallocates when
 * the caller has computed the final size (the Pulsar writers do), so no copy
 * is ever made.
 */
export class ByteWriter {
  private buffer: Uint8Array;
  private length = 0;

  constructor(initialCapacity = 256) {
    this.buffer = new Uint8Array(Math.max(16, initialCapacity));
  }

  get position(): number {
    return this.length;
  }

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    let capacity = this.buffer.length * 2;
    while (capacity < this.length + bytes) capacity *= 2;
    const grown = new Uint8Array(capacity);
    grown.set(this.buffer.subarray(0, this.length));
    this.buffer = grown;
  }

  byte(value: number): void {
    this.reserve(1);
    this.buffer[this.length++] = value;
  }

  /** A varint of a non-negative safe integer. */
  varint(value: number): void {
    this.reserve(8);
    let rest = value;
    while (rest >= 0x80000000) {
      this.buffer[this.length++] = (rest % 128) | 0x80;
      rest = Math.floor(rest / 128);
    }
    while (rest >= 0x80) {
      this.buffer[this.length++] = (rest & 0x7f) | 0x80;
      rest >>>= 7;
    }
    this.buffer[this.length++] = rest;
  }

  /** A protobuf int64 varint of a safe integer; negative values take 10 bytes. */
  int64(value: number): void {
    if (value >= 0) {
      this.varint(value);
      return;
    }
    const { lo, hi } = splitInt64(value);
    this.varint64(lo, hi);
  }

  /** A varint of the 64-bit value with 32-bit halves lo and hi (protobuf's varint64 write). */
  varint64(lo: number, hi: number): void {
    this.reserve(10);
    for (let shift = 0; shift < 28; shift += 7) {
      const bits = lo >>> shift;
      const more = !(bits >>> 7 === 0 && hi === 0);
      this.buffer[this.length++] = (more ? bits | 0x80 : bits) & 0xff;
      if (!more) return;
    }
    const split = ((lo >>> 28) & 0x0f) | ((hi & 0x07) << 4);
    const moreHigh = hi >>> 3 !== 0;
    this.buffer[this.length++] = (moreHigh ? split | 0x80 : split) & 0xff;
    if (!moreHigh) return;
    for (let shift = 3; shift < 31; shift += 7) {
      const bits = hi >>> shift;
      const more = bits >>> 7 !== 0;
      this.buffer[this.length++] = (more ? bits | 0x80 : bits) & 0xff;
      if (!more) return;
    }
    this.buffer[this.length++] = (hi >>> 31) & 0x01;
  }

  /** A zigzag varint of a safe integer (small negative numbers stay short). */
  zigzag(value: number): void {
    this.varint(value >= 0 ? value * 2 : -value * 2 - 1);
  }

  uint32LittleEndian(value: number): void {
    this.reserve(4);
    this.buffer[this.length++] = value & 0xff;
    this.buffer[this.length++] = (value >>> 8) & 0xff;
    this.buffer[this.length++] = (value >>> 16) & 0xff;
    this.buffer[this.length++] = (value >>> 24) & 0xff;
  }

  uint32BigEndian(value: number): void {
    this.reserve(4);
    this.buffer[this.length++] = (value >>> 24) & 0xff;
    this.buffer[this.length++] = (value >>> 16) & 0xff;
    this.buffer[this.length++] = (value >>> 8) & 0xff;
    this.buffer[this.length++] = value & 0xff;
  }

  bytes(data: Uint8Array): void {
    this.reserve(data.length);
    this.buffer.set(data, this.length);
    this.length += data.length;
  }

  /** Length-prefixed UTF-8. */
  string(text: string): void {
    const encoded = Buffer.from(text, 'utf8');
    this.varint(encoded.length);
    this.bytes(encoded);
  }

  /** The written bytes (a view when the buffer is exactly full, else a copy). */
  finish(): Uint8Array {
    return this.length === this.buffer.length ? this.buffer : this.buffer.slice(0, this.length);
  }
}
