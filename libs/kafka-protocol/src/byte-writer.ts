import { KafkaProtocolReason, protocolError } from './protocol-error.js';
import { MIN_SPLICED_CHUNK_BYTES, SplicedBytes } from './spliced-bytes.js';

const INITIAL_CAPACITY = 256;

function badValueThrow(message: string): never {
  throw protocolError(KafkaProtocolReason.KAFKA_BAD_VALUE, message);
}

function checkInteger(value: number, min: number, max: number, what: string): void {
  if (!Number.isInteger(value) || value < min || value > max)
    badValueThrow(`${what} ${value} is not in [${min}, ${max}]`);
}

/** Bytes of `value` as an unsigned varint (0 .. 2^32 - 1). */
function uvarintBytes(value: number): number {
  return value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x200000 ? 3 : value < 0x10000000 ? 4 : 5;
}

/** Zigzag of a 32-bit integer, as a number (0 .. 2^32 - 1): what varint and varlong write for it. */
function zigzag32(value: number): number {
  return value >= 0 ? value * 2 : -value * 2 - 1;
}

function fitsInt32(value: bigint): boolean {
  return value >= -2147483648n && value <= 2147483647n;
}

/** Bytes `varint(value)` writes. */
export function varintBytes(value: number): number {
  return uvarintBytes(zigzag32(value));
}

/** Bytes `varlong(value)` writes. */
export function varlongBytes(value: bigint): number {
  if (fitsInt32(value)) return varintBytes(Number(value));
  let rest = BigInt.asUintN(64, (value << 1n) ^ (value >> 63n));
  let bytes = 1;
  while (rest >= 0x80n) {
    rest >>= 7n;
    bytes++;
  }
  return bytes;
}

/**
 * Writes Kafka's primitive types into a buffer that grows as needed; given
 * the exact size up front (`capacity`), it allocates once and `finish` hands
 * that buffer over without copying it.
 *
 * Large byte strings can be spliced in rather than copied (`splice`): the
 * writer then holds its output as a list of buffers, its own bytes between
 * the spliced ones, and `chunks` hands them over as they are, to be written
 * together (a Fetch answer's record batches). Positions (`length`, `view`,
 * `truncate`, the patches) count every byte written, spliced ones too; only
 * bytes of the writer's own buffers can be viewed, cut or patched.
 */
export class ByteWriter {
  private buffer: Buffer;
  private position = 0;
  /** Where the bytes not yet handed to `segments` start in `buffer`. */
  private segmentStart = 0;
  /** The output before `segmentStart`: views of the writer's earlier buffers and spliced buffers, in order. */
  private readonly segments: { bytes: Buffer; spliced: boolean }[] = [];
  private segmentsLength = 0;

  constructor(capacity = INITIAL_CAPACITY) {
    this.buffer = Buffer.allocUnsafe(Math.max(1, capacity));
  }

  /** Bytes written so far, spliced ones included. */
  get length(): number {
    return this.segmentsLength + this.position - this.segmentStart;
  }

  private room(count: number): number {
    if (this.position + count > this.buffer.length) {
      // Only the bytes since the last splice move: what came before is already a segment of its own.
      const kept = this.position - this.segmentStart;
      let capacity = Math.max(1, this.buffer.length * 2);
      while (capacity < kept + count) capacity *= 2;
      const grown = Buffer.allocUnsafe(capacity);
      this.buffer.copy(grown, 0, this.segmentStart, this.position);
      this.buffer = grown;
      this.segmentStart = 0;
      this.position = kept;
    }
    const at = this.position;
    this.position += count;
    return at;
  }

  /** Where a position written since the last splice is in `buffer`; a bug when it is before that splice. */
  private local(at: number, count: number, what: string): number {
    const offset = at - this.segmentsLength;
    if (offset < 0 || offset + count > this.position - this.segmentStart) {
      throw new Error(`ByteWriter.${what}(${at}): only bytes written since the last splice are there`);
    }
    return this.segmentStart + offset;
  }

  /** One raw byte. `room` may replace the buffer, so it runs before the buffer is read. */
  private byte(value: number): void {
    const at = this.room(1);
    this.buffer[at] = value;
  }

  int8(value: number): this {
    checkInteger(value, -128, 127, 'int8');
    const at = this.room(1);
    this.buffer.writeInt8(value, at);
    return this;
  }

  int16(value: number): this {
    checkInteger(value, -32768, 32767, 'int16');
    const at = this.room(2);
    this.buffer.writeInt16BE(value, at);
    return this;
  }

  int32(value: number): this {
    checkInteger(value, -(2 ** 31), 2 ** 31 - 1, 'int32');
    const at = this.room(4);
    this.buffer.writeInt32BE(value, at);
    return this;
  }

  uint32(value: number): this {
    checkInteger(value, 0, 2 ** 32 - 1, 'uint32');
    const at = this.room(4);
    this.buffer.writeUInt32BE(value, at);
    return this;
  }

  int64(value: bigint): this {
    if (typeof value !== 'bigint' || BigInt.asIntN(64, value) !== value) badValueThrow(`int64 ${String(value)}`);
    const at = this.room(8);
    this.buffer.writeBigInt64BE(value, at);
    return this;
  }

  float64(value: number): this {
    const at = this.room(8);
    this.buffer.writeDoubleBE(value, at);
    return this;
  }

  bool(value: boolean): this {
    return this.int8(value ? 1 : 0);
  }

  raw(bytes: Uint8Array): this {
    const at = this.room(bytes.length);
    this.buffer.set(bytes, at);
    return this;
  }

  /**
   * Appends `bytes` without copying them: they stay the caller's buffer, one
   * of the chunks, and must not change until the output is written.
   */
  splice(bytes: Buffer): this {
    if (bytes.length === 0) return this;
    if (this.position > this.segmentStart) {
      this.segments.push({ bytes: this.buffer.subarray(this.segmentStart, this.position), spliced: false });
      this.segmentsLength += this.position - this.segmentStart;
    }
    this.segments.push({ bytes, spliced: true });
    this.segmentsLength += bytes.length;
    // The rest of the buffer goes on being written after the splice.
    this.segmentStart = this.position;
    return this;
  }

  uvarint(value: number): this {
    checkInteger(value, 0, 2 ** 32 - 1, 'unsigned varint');
    let rest = value;
    while (rest >= 0x80) {
      this.byte((rest % 0x80) | 0x80);
      rest = Math.floor(rest / 0x80);
    }
    this.byte(rest);
    return this;
  }

  /** Writes an unsigned value below 2^32 in 7-bit groups. */
  private uvarint32(value: number): void {
    let rest = value;
    while (rest >= 0x80) {
      this.byte((rest & 0x7f) | 0x80);
      rest >>>= 7;
    }
    this.byte(rest);
  }

  /** A zigzag varlong; one that fits 32 bits (record deltas) without bigint arithmetic, which allocates. */
  varlong(value: bigint): this {
    if (fitsInt32(value)) {
      this.uvarint32(zigzag32(Number(value)));
      return this;
    }
    let rest = BigInt.asUintN(64, (value << 1n) ^ (value >> 63n));
    while (rest >= 0x80n) {
      this.byte(Number(rest & 0x7fn) | 0x80);
      rest >>= 7n;
    }
    this.byte(Number(rest));
    return this;
  }

  varint(value: number): this {
    checkInteger(value, -(2 ** 31), 2 ** 31 - 1, 'varint');
    this.uvarint32(zigzag32(value));
    return this;
  }

  string(value: string | null, compact: boolean): this {
    if (value === null) return compact ? this.uvarint(0) : this.int16(-1);
    const bytes = Buffer.from(value, 'utf8');
    if (compact) this.uvarint(bytes.length + 1);
    else this.int16(bytes.length);
    return this.raw(bytes);
  }

  byteString(value: Uint8Array | SplicedBytes | null, compact: boolean): this {
    if (value === null) return compact ? this.uvarint(0) : this.int32(-1);
    if (compact) this.uvarint(value.length + 1);
    else this.int32(value.length);
    if (!(value instanceof SplicedBytes)) return this.raw(value);
    for (const chunk of value.chunks) {
      if (chunk.length >= MIN_SPLICED_CHUNK_BYTES) this.splice(chunk);
      else this.raw(chunk);
    }
    return this;
  }

  arrayLength(count: number | null, compact: boolean): this {
    if (count === null) return compact ? this.uvarint(0) : this.int32(-1);
    return compact ? this.uvarint(count + 1) : this.int32(count);
  }

  /** Overwrites an int32 written earlier (a length prefix known only once its body is written). */
  patchInt32(at: number, value: number): this {
    const target = this.patchTarget(at, 4);
    target.buffer.writeInt32BE(value, target.offset);
    return this;
  }

  /** Overwrites a uint32 written earlier (a CRC known only once what it covers is written). */
  patchUint32(at: number, value: number): this {
    const target = this.patchTarget(at, 4);
    target.buffer.writeUInt32BE(value, target.offset);
    return this;
  }

  /** The buffer and offset of `count` bytes at position `at`: the writer's own, in one piece. */
  private patchTarget(at: number, count: number): { buffer: Buffer; offset: number } {
    if (at >= this.segmentsLength) return { buffer: this.buffer, offset: this.local(at, count, 'patch') };
    let start = 0;
    for (const segment of this.segments) {
      const end = start + segment.bytes.length;
      if (at < end) {
        if (segment.spliced || at + count > end) throw new Error(`ByteWriter.patch(${at}): not the writer's own bytes`);
        return { buffer: segment.bytes, offset: at - start };
      }
      start = end;
    }
    throw new Error(`ByteWriter.patch(${at}): past the bytes written`);
  }

  /** Drops what was written after `length` (a tagged field is re-written behind its size). */
  truncate(length: number): this {
    this.position = this.local(length, 0, 'truncate');
    return this;
  }

  /** A view of the bytes written so far (since the last splice). */
  view(from = this.segmentsLength, to = this.length): Buffer {
    return this.buffer.subarray(this.local(from, 0, 'view'), this.local(to, 0, 'view'));
  }

  /** The bytes written, as a buffer of their own: the writer's, when they fill it exactly. */
  finish(): Buffer {
    if (this.segments.length > 0) return Buffer.concat(this.chunks(), this.length);
    if (this.position === this.buffer.length) return this.buffer;
    return Buffer.from(this.buffer.subarray(0, this.position));
  }

  /**
   * The bytes written as the buffers that hold them, in order, none copied:
   * views of the writer's own buffers between the spliced ones.
   */
  chunks(): Buffer[] {
    const chunks = this.segments.map((segment) => segment.bytes);
    if (this.position > this.segmentStart) chunks.push(this.buffer.subarray(this.segmentStart, this.position));
    return chunks;
  }
}
