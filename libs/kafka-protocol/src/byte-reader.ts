import { KafkaProtocolReason, protocolError } from './protocol-error.js';

/** Longest varint (a 64-bit value) in bytes. */
const MAX_VARINT_BYTES = 10;
/** Longest unsigned varint Kafka uses for lengths and counts (32 bits). */
const MAX_UVARINT32_BYTES = 5;

/**
 * Reads Kafka's primitive types from a buffer. Every read checks that the
 * bytes it needs are there first and fails with a protocol error otherwise,
 * so a truncated or hostile frame can never raise a RangeError.
 */
export class ByteReader {
  private position: number;
  private readonly end: number;

  constructor(
    private readonly buffer: Buffer,
    start = 0,
    end = buffer.length,
  ) {
    this.position = start;
    this.end = end;
  }

  get offset(): number {
    return this.position;
  }

  get remaining(): number {
    return this.end - this.position;
  }

  /** Fails unless every byte was read: a message with trailing bytes is not the message its schema says. */
  expectEnd(what: string): void {
    if (this.position !== this.end) {
      throw protocolError(KafkaProtocolReason.KAFKA_TRAILING_BYTES, `${this.remaining} bytes left after ${what}`);
    }
  }

  private need(count: number, what: string): number {
    if (count < 0 || count > this.remaining) {
      throw protocolError(
        KafkaProtocolReason.KAFKA_TRUNCATED,
        `${what} needs ${count} bytes at offset ${this.position}, ${this.remaining} left`,
      );
    }
    const at = this.position;
    this.position += count;
    return at;
  }

  int8(what = 'int8'): number {
    return this.buffer.readInt8(this.need(1, what));
  }

  uint8(what = 'uint8'): number {
    return this.buffer.readUInt8(this.need(1, what));
  }

  int16(what = 'int16'): number {
    return this.buffer.readInt16BE(this.need(2, what));
  }

  uint16(what = 'uint16'): number {
    return this.buffer.readUInt16BE(this.need(2, what));
  }

  int32(what = 'int32'): number {
    return this.buffer.readInt32BE(this.need(4, what));
  }

  uint32(what = 'uint32'): number {
    return this.buffer.readUInt32BE(this.need(4, what));
  }

  int64(what = 'int64'): bigint {
    return this.buffer.readBigInt64BE(this.need(8, what));
  }

  float64(what = 'float64'): number {
    return this.buffer.readDoubleBE(this.need(8, what));
  }

  bool(what = 'bool'): boolean {
    return this.int8(what) !== 0;
  }

  /** A copy-free view of `count` bytes. */
  bytes(count: number, what = 'bytes'): Buffer {
    const at = this.need(count, what);
    return this.buffer.subarray(at, at + count);
  }

  uuid(what = 'uuid'): Buffer {
    return this.bytes(16, what);
  }

  /** Kafka's unsigned varint (lengths and counts of flexible versions), at most 32 bits. */
  uvarint(what = 'unsigned varint'): number {
    let value = 0;
    for (let index = 0; index < MAX_UVARINT32_BYTES; index++) {
      const byte = this.uint8(what);
      value += (byte & 0x7f) * 2 ** (7 * index);
      if ((byte & 0x80) === 0) {
        if (value > 0xffffffff) break;
        return value;
      }
    }
    throw protocolError(KafkaProtocolReason.KAFKA_BAD_LENGTH, `${what} is longer than 32 bits`);
  }

  /** A zigzag varlong (record fields), as a bigint. */
  varlong(what = 'varlong'): bigint {
    let raw = 0n;
    for (let index = 0; index < MAX_VARINT_BYTES; index++) {
      const byte = this.uint8(what);
      raw |= BigInt(byte & 0x7f) << BigInt(7 * index);
      if ((byte & 0x80) === 0) {
        raw = BigInt.asUintN(64, raw);
        return BigInt.asIntN(64, (raw >> 1n) ^ -(raw & 1n));
      }
    }
    throw protocolError(KafkaProtocolReason.KAFKA_BAD_LENGTH, `${what} is longer than ${MAX_VARINT_BYTES} bytes`);
  }

  /** A zigzag varint that must fit a safe integer (record lengths, deltas, counts). */
  varint(what = 'varint'): number {
    const value = this.varlong(what);
    if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw protocolError(KafkaProtocolReason.KAFKA_BAD_LENGTH, `${what} ${value} is out of range`);
    }
    return Number(value);
  }

  /** A length that must lie in [-1, remaining]; -1 means null. */
  private length(raw: number, what: string, nullable: boolean): number {
    if (raw === -1 && nullable) return -1;
    if (raw < 0) throw protocolError(KafkaProtocolReason.KAFKA_BAD_LENGTH, `${what} has length ${raw}`);
    if (raw > this.remaining) {
      throw protocolError(
        KafkaProtocolReason.KAFKA_TRUNCATED,
        `${what} has length ${raw} but only ${this.remaining} bytes are left`,
      );
    }
    return raw;
  }

  string(nullable: boolean, compact: boolean, what = 'string'): string | null {
    const raw = compact ? this.uvarint(what) - 1 : this.int16(what);
    const size = this.length(raw, what, nullable);
    return size === -1 ? null : this.bytes(size, what).toString('utf8');
  }

  byteString(nullable: boolean, compact: boolean, what = 'bytes'): Buffer | null {
    const raw = compact ? this.uvarint(what) - 1 : this.int32(what);
    const size = this.length(raw, what, nullable);
    return size === -1 ? null : this.bytes(size, what);
  }

  /**
   * An array's element count, -1 for null. Every element takes at least
   * `minElementBytes`, so a count the remaining bytes cannot hold is refused
   * before anything is allocated for it.
   */
  arrayLength(nullable: boolean, compact: boolean, minElementBytes: number, what = 'array'): number {
    const raw = compact ? this.uvarint(what) - 1 : this.int32(what);
    if (raw === -1 && nullable) return -1;
    if (raw < 0) throw protocolError(KafkaProtocolReason.KAFKA_BAD_LENGTH, `${what} has count ${raw}`);
    if (raw * Math.max(1, minElementBytes) > this.remaining) {
      throw protocolError(
        KafkaProtocolReason.KAFKA_TRUNCATED,
        `${what} claims ${raw} elements but only ${this.remaining} bytes are left`,
      );
    }
    return raw;
  }
}
