/**
 * Writers for the two metadata messages every publish encodes
 * (MessageMetadata, SingleMessageMetadata), by hand: protobuf-es builds a
 * message object and walks its descriptor for each one, which was a visible
 * share of a publish's CPU. The bytes are exactly what protobuf-es's toBinary
 * writes for the same fields (fields in number order, proto2 required fields
 * always, optional ones when set); metadata-writer.spec.ts checks that.
 */

/** A property as the wire carries it: a KeyValue { key = 1, value = 2 }. */
export interface PropertyPair {
  key: string;
  value: string;
}

/** MessageMetadata fields an entry sets (PulsarApi.proto numbers in the comments). */
export interface MessageMetadataFields {
  producerName: string; // 1
  sequenceId: bigint; // 2
  publishTime: bigint; // 3
  properties: readonly PropertyPair[]; // 4
  partitionKey?: string; // 6
  numMessagesInBatch?: number; // 11
  eventTime?: bigint; // 12
  highestSequenceId?: bigint; // 24
}

/** SingleMessageMetadata fields of one batched message. */
export interface SingleMessageMetadataFields {
  properties: readonly PropertyPair[]; // 1
  partitionKey?: string; // 2
  payloadSize: number; // 3
  eventTime?: bigint; // 5
  sequenceId: bigint; // 8
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const LENGTH_DELIMITED = 2;
const VARINT = 0;

/** Collects a message's fields as bytes; the size is known before the one buffer is allocated. */
class FieldList {
  private readonly parts: Array<number | bigint | Uint8Array> = [];
  private readonly kinds: number[] = [];
  size = 0;

  varint(field: number, value: number | bigint): void {
    this.tag(field, VARINT);
    // Values up to 2^53 take the number paths below, which are much cheaper than bigint arithmetic.
    if (typeof value === 'bigint' && value >= 0n && value <= MAX_SAFE) value = Number(value);
    this.parts.push(value);
    this.kinds.push(VARINT);
    this.size += varintSize(value);
  }

  bytes(field: number, value: Uint8Array): void {
    this.tag(field, LENGTH_DELIMITED);
    this.parts.push(value.length);
    this.kinds.push(VARINT);
    this.size += varintSize(value.length);
    this.parts.push(value);
    this.kinds.push(LENGTH_DELIMITED);
    this.size += value.length;
  }

  string(field: number, value: string): void {
    this.bytes(field, utf8(value));
  }

  properties(field: number, properties: readonly PropertyPair[]): void {
    for (const { key, value } of properties) {
      const pair = new FieldList();
      pair.string(1, key);
      pair.string(2, value);
      this.bytes(field, pair.finish());
    }
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.size);
    this.writeTo(out, 0);
    return out;
  }

  /** Writes the message's `size` bytes into `out` from `at` on; returns where they end. */
  writeTo(out: Uint8Array, at: number): number {
    for (let i = 0; i < this.parts.length; i++) {
      const part = this.parts[i]!;
      if (this.kinds[i] === LENGTH_DELIMITED) {
        out.set(part as Uint8Array, at);
        at += (part as Uint8Array).length;
      } else {
        at = writeVarint(out, at, part as number | bigint);
      }
    }
    return at;
  }

  private tag(field: number, wireType: number): void {
    const tag = (field << 3) | wireType;
    this.parts.push(tag);
    this.kinds.push(VARINT);
    this.size += varintSize(tag);
  }
}

function varintSize(value: number | bigint): number {
  if (typeof value === 'number' && value >= 0) {
    if (value < 0x80) return 1;
    let size = 1;
    for (let v = value; v >= 0x80; v = Math.floor(v / 0x80)) size++;
    return size;
  }
  let v = typeof value === 'bigint' ? value : BigInt(value);
  if (v < 0n) v = BigInt.asUintN(64, v); // protobuf writes a negative int32 as ten bytes
  let size = 1;
  while (v >= 0x80n) {
    v >>= 7n;
    size++;
  }
  return size;
}

function writeVarint(out: Uint8Array, at: number, value: number | bigint): number {
  if (typeof value === 'number' && value >= 0) {
    // Safe integers only (the caller converts larger values to bigint): division keeps them exact.
    let v = value;
    while (v >= 0x80) {
      out[at++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    out[at++] = v;
    return at;
  }
  let v = typeof value === 'bigint' ? value : BigInt(value);
  if (v < 0n) v = BigInt.asUintN(64, v);
  while (v >= 0x80n) {
    out[at++] = Number(v & 0x7fn) | 0x80;
    v >>= 7n;
  }
  out[at++] = Number(v);
  return at;
}

/** A message's fields collected and sized, to be written where its bytes go (no buffer of its own). */
export interface SizedMessage {
  readonly size: number;
  writeTo(out: Uint8Array, at: number): number;
}

/**
 * The UTF-8 bytes of `value`. The last string asked for is remembered with its bytes: a publish encodes
 * the same producer name for every entry of a request, and its bytes are only read (copied into the entry).
 */
function utf8(value: string): Uint8Array {
  if (value === lastString) return lastBytes;
  const bytes = Buffer.from(value, 'utf8');
  lastString = value;
  lastBytes = bytes;
  return bytes;
}
let lastString = '';
let lastBytes: Uint8Array = new Uint8Array(0);

export function writeMessageMetadata(fields: MessageMetadataFields): Uint8Array {
  return messageMetadata(fields).finish();
}

/** MessageMetadata's fields sized, written by the caller into the entry itself. */
export function sizeMessageMetadata(fields: MessageMetadataFields): SizedMessage {
  return messageMetadata(fields);
}

function messageMetadata(fields: MessageMetadataFields): FieldList {
  const list = new FieldList();
  list.string(1, fields.producerName);
  list.varint(2, fields.sequenceId);
  list.varint(3, fields.publishTime);
  list.properties(4, fields.properties);
  if (fields.partitionKey !== undefined) list.string(6, fields.partitionKey);
  if (fields.numMessagesInBatch !== undefined) list.varint(11, fields.numMessagesInBatch);
  if (fields.eventTime !== undefined) list.varint(12, fields.eventTime);
  if (fields.highestSequenceId !== undefined) list.varint(24, fields.highestSequenceId);
  return list;
}

export function writeSingleMessageMetadata(fields: SingleMessageMetadataFields): Uint8Array {
  const list = new FieldList();
  list.properties(1, fields.properties);
  if (fields.partitionKey !== undefined) list.string(2, fields.partitionKey);
  list.varint(3, fields.payloadSize);
  if (fields.eventTime !== undefined) list.varint(5, fields.eventTime);
  list.varint(8, fields.sequenceId);
  return list.finish();
}
