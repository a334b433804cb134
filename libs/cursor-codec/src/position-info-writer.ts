import type { AckSet } from './ack-set.js';
import * as sizes from './byte-writer.js';
import { ByteWriter } from './byte-writer.js';
import { remainingBatchIndexes, type PositionedBatchAck } from './cursor-state.js';
import { forEachLongArrayWord } from './long-array.js';
import type { Position } from './position.js';

// Pulsar's PositionInfo (MLDataFormats.proto, proto2), written by hand so
// that ten million ranges do not become ten million message objects. Fields
// are written in field-number order with required fields always present,
// which is what protobuf-java (and protobuf-es) produce; the position-info spec
// checks the bytes against protobuf-es.
const TAG_LEDGER_ID = 0x08; // field 1, varint
const TAG_ENTRY_ID = 0x10; // field 2, varint
const TAG_RANGE = 0x1a; // field 3, length-delimited (MessageRange)
const TAG_PROPERTY = 0x22; // field 4 (LongProperty)
const TAG_BATCH = 0x2a; // field 5 (BatchedEntryDeletionIndexInfo)
const TAG_LONG_LIST = 0x32; // field 6 (LongListMap)
const TAG_SUB_1_MESSAGE = 0x0a; // field 1 of a nested message, length-delimited
const TAG_SUB_2_MESSAGE = 0x12; // field 2 of a nested message, length-delimited
const TAG_SUB_1_VARINT = 0x08;
const TAG_SUB_2_VARINT = 0x10;

// Local bindings of the size helpers: the range loops call them tens of
// millions of times, and an imported binding costs a property lookup per
// call under CommonJS interop.
const varintSize = sizes.varintSize;
const int64Size = sizes.int64Size;
const varint64Size = sizes.varint64Size;

export type PositionInfoLayout = 'pulsar-ranges' | 'long-array';

/** What goes into one PositionInfo, already cut to the persistence limits. */
export interface PositionInfoParts {
  markDelete: Position;
  acked: AckSet;
  properties: readonly (readonly [string, bigint | number])[];
  batches: readonly PositionedBatchAck[];
}

interface PreparedProperty {
  name: Uint8Array;
  lo: number;
  hi: number;
}

interface PreparedBatch {
  ledgerId: number;
  entryId: number;
  words: Uint32Array;
}

function nestedPositionSize(ledgerId: number, entryId: number): number {
  return 2 + int64Size(ledgerId) + int64Size(entryId);
}

function rangeBodySize(ledgerId: number, first: number, last: number): number {
  const lower = nestedPositionSize(ledgerId, first - 1);
  const upper = nestedPositionSize(ledgerId, last);
  return 2 + varintSize(lower) + lower + varintSize(upper) + upper;
}

function delimitedSize(bodySize: number): number {
  return 1 + varintSize(bodySize) + bodySize;
}

function prepareProperties(parts: PositionInfoParts): PreparedProperty[] {
  return parts.properties.map(([name, value]) => {
    const big = BigInt.asUintN(64, BigInt(value));
    return { name: Buffer.from(name, 'utf8'), lo: Number(big & 0xffffffffn), hi: Number(big >> 32n) };
  });
}

/** Pulsar's deleteSet: BitSet words with a bit set for every index still to deliver. */
function prepareBatches(parts: PositionInfoParts): PreparedBatch[] {
  return parts.batches.map(({ ledgerId, entryId, batch }) => {
    const remaining = remainingBatchIndexes(batch);
    const highest = remaining[remaining.length - 1] ?? -1;
    const words = new Uint32Array((Math.floor(highest / 64) + 1) * 2);
    for (const index of remaining) words[index >>> 5] = ((words[index >>> 5] ?? 0) | (1 << (index & 31))) >>> 0;
    return { ledgerId, entryId, words };
  });
}

function propertyBodySize(property: PreparedProperty): number {
  return 2 + varintSize(property.name.length) + property.name.length + varint64Size(property.lo, property.hi);
}

function batchBodySize(batch: PreparedBatch): number {
  let size = delimitedSize(nestedPositionSize(batch.ledgerId, batch.entryId));
  for (let word = 0; word < batch.words.length; word += 2) {
    size += 1 + varint64Size(batch.words[word] ?? 0, batch.words[word + 1] ?? 0);
  }
  return size;
}

function longListBodySize(acked: AckSet, ledgerId: number): number {
  let size = 1 + int64Size(ledgerId);
  const ledger = acked.ledger(ledgerId);
  if (ledger === undefined) return size;
  forEachLongArrayWord(ledger, (lo, hi, count) => {
    size += count * (1 + varint64Size(lo, hi));
  });
  return size;
}

/** The exact size of the fields 3 (or 6) of a PositionInfo, without writing them. */
export function ackFieldsSize(acked: AckSet, layout: PositionInfoLayout): number {
  let size = 0;
  if (layout === 'pulsar-ranges') {
    acked.forEachRange((ledgerId, first, last) => {
      size += delimitedSize(rangeBodySize(ledgerId, first, last));
    });
  } else {
    for (const ledgerId of acked.ledgerIds()) size += delimitedSize(longListBodySize(acked, ledgerId));
  }
  return size;
}

/** A PositionInfo sized but not yet written, so a caller can check the size before paying for the bytes. */
export interface PositionInfoPlan {
  parts: PositionInfoParts;
  layout: PositionInfoLayout;
  size: number;
  properties: PreparedProperty[];
  batches: PreparedBatch[];
}

export function planPositionInfo(parts: PositionInfoParts, layout: PositionInfoLayout): PositionInfoPlan {
  const properties = prepareProperties(parts);
  const batches = prepareBatches(parts);
  const size = headerAndTailSize(parts, properties, batches) + ackFieldsSize(parts.acked, layout);
  return { parts, layout, size, properties, batches };
}

function headerAndTailSize(parts: PositionInfoParts, properties: PreparedProperty[], batches: PreparedBatch[]): number {
  let size = 2 + int64Size(parts.markDelete.ledgerId) + int64Size(parts.markDelete.entryId);
  for (const property of properties) size += delimitedSize(propertyBodySize(property));
  for (const batch of batches) size += delimitedSize(batchBodySize(batch));
  return size;
}

/** Writes a planned PositionInfo with the acknowledged entries in the plan's layout. */
export function writePositionInfo(plan: PositionInfoPlan): Uint8Array {
  const { parts, layout, size } = plan;
  const out = new ByteWriter(size);
  out.byte(TAG_LEDGER_ID);
  out.int64(parts.markDelete.ledgerId);
  out.byte(TAG_ENTRY_ID);
  out.int64(parts.markDelete.entryId);
  if (layout === 'pulsar-ranges') writeRanges(out, parts.acked);
  for (const property of plan.properties) writeProperty(out, property);
  for (const batch of plan.batches) writeBatch(out, batch);
  if (layout === 'long-array') writeLongLists(out, parts.acked);
  if (out.position !== size) throw new Error(`PositionInfo size ${out.position} differs from computed ${size}`);
  return out.finish();
}

function writeNestedPosition(out: ByteWriter, tag: number, ledgerId: number, entryId: number): void {
  out.byte(tag);
  out.varint(nestedPositionSize(ledgerId, entryId));
  out.byte(TAG_SUB_1_VARINT);
  out.int64(ledgerId);
  out.byte(TAG_SUB_2_VARINT);
  out.int64(entryId);
}

/** Field 3: each inclusive range [a, b] becomes the open-closed MessageRange (a - 1, b]. */
function writeRanges(out: ByteWriter, acked: AckSet): void {
  acked.forEachRange((ledgerId, first, last) => {
    out.byte(TAG_RANGE);
    out.varint(rangeBodySize(ledgerId, first, last));
    writeNestedPosition(out, TAG_SUB_1_MESSAGE, ledgerId, first - 1);
    writeNestedPosition(out, TAG_SUB_2_MESSAGE, ledgerId, last);
  });
}

function writeProperty(out: ByteWriter, property: PreparedProperty): void {
  out.byte(TAG_PROPERTY);
  out.varint(propertyBodySize(property));
  out.byte(TAG_SUB_1_MESSAGE);
  out.varint(property.name.length);
  out.bytes(property.name);
  out.byte(TAG_SUB_2_VARINT);
  out.varint64(property.lo, property.hi);
}

function writeBatch(out: ByteWriter, batch: PreparedBatch): void {
  out.byte(TAG_BATCH);
  out.varint(batchBodySize(batch));
  writeNestedPosition(out, TAG_SUB_1_MESSAGE, batch.ledgerId, batch.entryId);
  for (let word = 0; word < batch.words.length; word += 2) {
    out.byte(TAG_SUB_2_VARINT);
    out.varint64(batch.words[word] ?? 0, batch.words[word + 1] ?? 0);
  }
}

/** Field 6: per ledger, the bitset words, unpacked as in Pulsar's proto2 file. */
function writeLongLists(out: ByteWriter, acked: AckSet): void {
  for (const ledgerId of acked.ledgerIds()) {
    const ledger = acked.ledger(ledgerId);
    if (ledger === undefined) continue;
    out.byte(TAG_LONG_LIST);
    out.varint(longListBodySize(acked, ledgerId));
    out.byte(TAG_SUB_1_VARINT);
    out.int64(ledgerId);
    forEachLongArrayWord(ledger, (lo, hi, count) => {
      for (let repeat = 0; repeat < count; repeat++) {
        out.byte(TAG_SUB_2_VARINT);
        out.varint64(lo, hi);
      }
    });
  }
}
