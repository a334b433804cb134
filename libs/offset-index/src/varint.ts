import { invalidArgument } from '@ledgerline/errors';

/**
 * Protobuf base-128 varints for non-negative safe integers. Arithmetic is done
 * with numbers rather than 32-bit bitwise operators so that values up to
 * 2^53 - 1 round-trip exactly.
 */

/** Bytes needed to write `value` as a varint. */
export function varintSize(value: number): number {
  let size = 1;
  let rest = value;
  while (rest >= 0x80) {
    rest = Math.floor(rest / 0x80);
    size += 1;
  }
  return size;
}

/** Writes `value` at `offset` and returns the offset after it. The caller has checked the value and the room. */
export function writeVarint(target: Uint8Array, offset: number, value: number): number {
  let position = offset;
  let rest = value;
  while (rest >= 0x80) {
    target[position++] = (rest % 0x80) | 0x80;
    rest = Math.floor(rest / 0x80);
  }
  target[position++] = rest;
  return position;
}

export interface VarintRead {
  value: number;
  next: number;
}

/** What a caller wants a bad varint reported as: the stable reasons and a prefix for the message. */
export interface VarintErrors {
  context: string;
  truncatedReason: string;
  tooLargeReason: string;
}

/**
 * Reads a varint of at most 10 bytes (a uint64). Values above 2^53 - 1 are
 * refused with `errors.tooLargeReason`, since they cannot be represented exactly.
 */
export function readVarint(source: Uint8Array, offset: number, end: number, errors: VarintErrors): VarintRead {
  let value = 0;
  let scale = 1;
  for (let position = offset; position < end && position - offset < 10; position++) {
    const byte = source[position] as number;
    value += (byte & 0x7f) * scale;
    scale *= 0x80;
    if ((byte & 0x80) === 0) {
      if (value > Number.MAX_SAFE_INTEGER) {
        throw invalidArgument(errors.tooLargeReason, `${errors.context}: a value at byte ${offset} exceeds 2^53 - 1`, {
          offset: String(offset),
        });
      }
      return { value, next: position + 1 };
    }
  }
  throw invalidArgument(
    errors.truncatedReason,
    `${errors.context}: the varint at byte ${offset} is truncated or longer than 10 bytes`,
    { offset: String(offset) },
  );
}
