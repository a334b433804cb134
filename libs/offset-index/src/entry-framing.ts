import { invalidArgument } from '@ledgerline/errors';
import {
  BROKER_ENTRY_METADATA_MAGIC,
  ENTRY_HEADER_BYTES,
  MAX_BROKER_ENTRY_METADATA_BYTES,
  MAX_OFFSET,
} from './limits.js';
import { readVarint, varintSize, writeVarint, type VarintErrors } from './varint.js';
import { OffsetIndexReason } from './errors.js';

/** What Ledgerline writes in front of every entry: the broker's clock and the continuous offset. */
export interface EntryMetadata {
  /** Milliseconds since the epoch, taken by the broker when it appended the entry. */
  brokerTimestamp: number;
  /** The offset of the LAST message in the entry (Pulsar's convention); the first message of a topic is 0. */
  index: number;
  /**
   * The largest time a reader answers for the entry's messages, as its
   * publisher gave it (0 when none of them has a time). Absent when the
   * publisher gave none: a lookup by event time counts the entry with its
   * broker timestamp.
   */
  maxEventTimeMs?: number;
}

/**
 * Broker entry metadata as decoded. Both fields are optional on the wire:
 * a Pulsar broker with only the timestamp interceptor writes no index.
 */
export interface DecodedEntryMetadata {
  brokerTimestamp?: number;
  index?: number;
  maxEventTimeMs?: number;
}

export interface DecodedEntry {
  /** Undefined when the entry does not start with the 0x0e02 magic. */
  metadata: DecodedEntryMetadata | undefined;
  /** The bytes after the header, shared with the input (not copied). */
  payload: Uint8Array;
}

const TIMESTAMP_TAG = (1 << 3) | 0; // field 1, varint
const INDEX_TAG = (2 << 3) | 0; // field 2, varint
// Field 100, varint: Ledgerline's own field, numbered far from Pulsar's so that a field Pulsar adds never collides.
const MAX_EVENT_TIME_FIELD = 100;
const MAX_EVENT_TIME_TAG = (MAX_EVENT_TIME_FIELD << 3) | 0;
const MAX_EVENT_TIME_TAG_BYTES = varintSize(MAX_EVENT_TIME_TAG);

const metadataVarintErrors: VarintErrors = {
  context: 'broker entry metadata',
  truncatedReason: 'MALFORMED_BROKER_ENTRY_METADATA',
  tooLargeReason: 'BROKER_ENTRY_METADATA_VALUE_TOO_LARGE',
};

/** The widest varint a metadata value takes (a safe integer needs at most 8 of protobuf's 7-bit groups). */
const MAX_METADATA_VARINT_BYTES = 8;

/** Room in front of a payload for the largest header encodeEntry writes: magic, size, three tagged varints. */
export const ENTRY_HEADROOM_BYTES =
  ENTRY_HEADER_BYTES + 2 * (1 + MAX_METADATA_VARINT_BYTES) + MAX_EVENT_TIME_TAG_BYTES + MAX_METADATA_VARINT_BYTES;

/** Payloads from allocateWithEntryHeadroom whose headroom no framing has used yet. */
const unframedHeadroom = new WeakSet<Uint8Array>();

/**
 * The slab entries are carved from, as Node's buffer pool carves small
 * Buffers: bytes handed out are never handed out again; a full slab is
 * dropped and freed by the garbage collector once no entry in it is
 * referenced. One view per entry, where a pooled Buffer took a Buffer and a
 * view. Each slab costs about 4 µs to allocate and track whatever its size
 * (Node's pool takes 8 KiB, so seven 1 KiB entries shared it: about 600 ns
 * each); 32 KiB brings that to about 170 ns an entry. The price: one entry
 * kept long (in an entry cache) holds up to its whole slab alive, four times
 * what a pooled Buffer held at most.
 */
const SLAB_BYTES = 32 * 1024;
let slab: ArrayBuffer = new ArrayBuffer(0);
let slabUsed = 0;

/**
 * `size` bytes for an entry payload with ENTRY_HEADROOM_BYTES of room before
 * them that only encodeEntry writes: the first encodeEntry of the payload
 * writes its header there and returns a view over header and payload, with
 * no copy of the payload. Later ones copy, so an entry framed once never
 * changes under a write still in flight. The bytes come uninitialised (a
 * fresh zeroed backing store per entry cost 2-3 µs in allocation and GC):
 * the caller writes every one of them.
 */
export function allocateWithEntryHeadroom(size: number): Uint8Array {
  const total = ENTRY_HEADROOM_BYTES + size;
  let payload: Uint8Array;
  if (total > SLAB_BYTES / 2) {
    const own = Buffer.allocUnsafeSlow(total);
    payload = new Uint8Array(own.buffer, own.byteOffset + ENTRY_HEADROOM_BYTES, size);
  } else {
    if (slabUsed + total > slab.byteLength) {
      slab = Buffer.allocUnsafeSlow(SLAB_BYTES).buffer as ArrayBuffer;
      slabUsed = 0;
    }
    payload = new Uint8Array(slab, slabUsed + ENTRY_HEADROOM_BYTES, size);
    // Aligned to 8 bytes as Node's pool aligns, for readers of the bytes that want it.
    slabUsed = (slabUsed + total + 7) & ~7;
  }
  unframedHeadroom.add(payload);
  return payload;
}

/**
 * Frames `payload` in Pulsar's layout: magic 0x0e02 (2 bytes), the metadata
 * size (4 bytes, big-endian), BrokerEntryMetadata{broker_timestamp = 1,
 * index = 2, max_event_time_ms = 100 when given}, then the payload byte for
 * byte.
 */
export function encodeEntry(metadata: EntryMetadata, payload: Uint8Array): Uint8Array {
  checkMetadataValue(metadata?.brokerTimestamp, 'brokerTimestamp');
  checkMetadataValue(metadata?.index, 'index');
  const maxEventTimeMs = metadata.maxEventTimeMs;
  if (maxEventTimeMs !== undefined) checkMetadataValue(maxEventTimeMs, 'maxEventTimeMs');
  if (!(payload instanceof Uint8Array)) {
    throw invalidArgument(OffsetIndexReason.INVALID_ENTRY_PAYLOAD, 'the entry payload must be a Uint8Array');
  }
  const metadataSize =
    2 +
    varintSize(metadata.brokerTimestamp) +
    varintSize(metadata.index) +
    (maxEventTimeMs === undefined ? 0 : MAX_EVENT_TIME_TAG_BYTES + varintSize(maxEventTimeMs));
  const headerSize = ENTRY_HEADER_BYTES + metadataSize;
  const inPlace = unframedHeadroom.delete(payload);
  const bytes = inPlace
    ? new Uint8Array(payload.buffer, payload.byteOffset - headerSize, headerSize + payload.length)
    : new Uint8Array(headerSize + payload.length);
  // Written byte by byte: a DataView per entry cost more than these few stores.
  bytes[0] = BROKER_ENTRY_METADATA_MAGIC >>> 8;
  bytes[1] = BROKER_ENTRY_METADATA_MAGIC & 0xff;
  bytes[2] = metadataSize >>> 24;
  bytes[3] = (metadataSize >>> 16) & 0xff;
  bytes[4] = (metadataSize >>> 8) & 0xff;
  bytes[5] = metadataSize & 0xff;
  let position = ENTRY_HEADER_BYTES;
  bytes[position++] = TIMESTAMP_TAG;
  position = writeVarint(bytes, position, metadata.brokerTimestamp);
  bytes[position++] = INDEX_TAG;
  position = writeVarint(bytes, position, metadata.index);
  if (maxEventTimeMs !== undefined) {
    position = writeVarint(bytes, position, MAX_EVENT_TIME_TAG);
    position = writeVarint(bytes, position, maxEventTimeMs);
  }
  if (!inPlace) bytes.set(payload, position);
  return bytes;
}

/**
 * Splits an entry into its broker entry metadata and payload. An entry that
 * does not start with the magic is returned whole with `metadata` undefined.
 * A header that is cut short, or declares metadata larger than
 * MAX_BROKER_ENTRY_METADATA_BYTES, is INVALID_ARGUMENT with a reason.
 */
export function decodeEntry(bytes: Uint8Array): DecodedEntry {
  if (!(bytes instanceof Uint8Array)) {
    throw invalidArgument(OffsetIndexReason.INVALID_ENTRY_BYTES, 'an entry must be a Uint8Array');
  }
  if (bytes.length < 2 || ((bytes[0] as number) << 8) + (bytes[1] as number) !== BROKER_ENTRY_METADATA_MAGIC) {
    return { metadata: undefined, payload: bytes };
  }
  if (bytes.length < ENTRY_HEADER_BYTES) {
    throw invalidArgument(
      OffsetIndexReason.ENTRY_HEADER_TRUNCATED,
      `the entry has the 0x0e02 magic but only ${bytes.length} bytes`,
      {
        sizeBytes: String(bytes.length),
      },
    );
  }
  const metadataSize = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(2);
  if (metadataSize > MAX_BROKER_ENTRY_METADATA_BYTES) {
    throw invalidArgument(
      OffsetIndexReason.BROKER_ENTRY_METADATA_TOO_LARGE,
      `the entry declares ${metadataSize} bytes of broker entry metadata; at most ${MAX_BROKER_ENTRY_METADATA_BYTES} are accepted`,
      { metadataSizeBytes: String(metadataSize) },
    );
  }
  const end = ENTRY_HEADER_BYTES + metadataSize;
  if (end > bytes.length) {
    throw invalidArgument(
      OffsetIndexReason.ENTRY_HEADER_TRUNCATED,
      `the entry declares ${metadataSize} bytes of broker entry metadata but only ${bytes.length - ENTRY_HEADER_BYTES} follow`,
      { metadataSizeBytes: String(metadataSize), sizeBytes: String(bytes.length) },
    );
  }
  return { metadata: decodeMetadata(bytes, ENTRY_HEADER_BYTES, end), payload: bytes.subarray(end) };
}

/**
 * A minimal protobuf reader for BrokerEntryMetadata: fields 1, 2 and 100
 * are uint64 varints (the last occurrence wins, as in protobuf); unknown fields
 * are skipped by wire type so that metadata from a newer writer still decodes.
 */
function decodeMetadata(bytes: Uint8Array, start: number, end: number): DecodedEntryMetadata {
  const metadata: DecodedEntryMetadata = {};
  let position = start;
  while (position < end) {
    const tag = readVarint(bytes, position, end, metadataVarintErrors);
    position = tag.next;
    const field = Math.floor(tag.value / 8);
    const wireType = tag.value % 8;
    // A tag is a uint32 in protobuf: field numbers run from 1 to 2^29 - 1.
    if (field === 0 || tag.value > 0xffffffff) throw malformed(`invalid field number ${field} before byte ${position}`);
    if (field === 1 || field === 2 || field === MAX_EVENT_TIME_FIELD) {
      if (wireType !== 0) throw malformed(`field ${field} has wire type ${wireType}, expected a varint`);
      const value = readVarint(bytes, position, end, metadataVarintErrors);
      position = value.next;
      if (field === 1) metadata.brokerTimestamp = value.value;
      else if (field === 2) metadata.index = value.value;
      else metadata.maxEventTimeMs = value.value;
    } else {
      position = skipField(bytes, position, end, wireType);
    }
  }
  return metadata;
}

function skipField(bytes: Uint8Array, position: number, end: number, wireType: number): number {
  let next: number;
  if (wireType === 0) next = readVarint(bytes, position, end, metadataVarintErrors).next;
  else if (wireType === 1) next = position + 8;
  else if (wireType === 5) next = position + 4;
  else if (wireType === 2) {
    const length = readVarint(bytes, position, end, metadataVarintErrors);
    next = length.next + length.value;
  } else {
    throw malformed(`unsupported wire type ${wireType}`);
  }
  if (next > end) throw malformed('an unknown field runs past the end of the metadata');
  return next;
}

function malformed(detail: string) {
  return invalidArgument(
    OffsetIndexReason.MALFORMED_BROKER_ENTRY_METADATA,
    `broker entry metadata is not valid protobuf: ${detail}`,
  );
}

function checkMetadataValue(value: unknown, name: string): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > MAX_OFFSET) {
    throw invalidArgument(
      OffsetIndexReason.INVALID_BROKER_ENTRY_METADATA,
      `${name} must be an integer between 0 and 2^53 - 1, got ${String(value)}`,
      { field: name },
    );
  }
}
