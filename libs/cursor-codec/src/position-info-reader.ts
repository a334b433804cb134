import { AckSet } from './ack-set.js';
import { ByteReader, bigintOf } from './byte-reader.js';
import { MAX_BATCH_SIZE, batchAckFromRemaining, createCursorState, type CursorState } from './cursor-state.js';
import { malformed } from './errors.js';
import { LongArrayBuilder } from './long-array.js';
import { positionKey, type Position } from './position.js';

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_DELIMITED = 2;
const WIRE_FIXED32 = 5;
/** Words a batch's deleteSet may hold: MAX_BATCH_SIZE bits. */
const MAX_BATCH_WORDS = MAX_BATCH_SIZE / 64;

/**
 * Reads a Pulsar PositionInfo by hand (see position-info-writer.ts for why).
 * Fields may come in any order; unknown fields are skipped; repeated int64
 * fields are accepted packed or unpacked, as every protobuf parser must.
 * Field 3 (MessageRanges) wins over field 6 (LongListMap), as in Pulsar.
 */
export function readPositionInfo(bytes: Uint8Array): CursorState {
  const reader = new ByteReader(bytes);
  const state = createCursorState();
  const ranges = new AckSet();
  const longLists = new AckSet();
  let ledgerId: number | undefined;
  let entryId: number | undefined;
  while (!reader.atEnd()) {
    const tag = reader.varint32();
    const field = tag >>> 3;
    const wire = tag & 7;
    if (field === 1 && wire === WIRE_VARINT) ledgerId = reader.int64(-1, 'mark-delete ledger id');
    else if (field === 2 && wire === WIRE_VARINT) entryId = reader.int64(-1, 'mark-delete entry id');
    else if (field === 3 && wire === WIRE_DELIMITED) readRange(reader.sub(reader.varint()), ranges);
    else if (field === 4 && wire === WIRE_DELIMITED) readProperty(reader.sub(reader.varint()), state);
    else if (field === 5 && wire === WIRE_DELIMITED) readBatch(reader.sub(reader.varint()), state);
    else if (field === 6 && wire === WIRE_DELIMITED) readLongList(reader.sub(reader.varint()), longLists);
    else skipField(reader, field, wire);
  }
  if (ledgerId === undefined || entryId === undefined) {
    throw malformed('PositionInfo lacks its required ledgerId (1) or entryId (2)');
  }
  state.markDelete = { ledgerId, entryId };
  state.acked = ranges.isEmpty() ? longLists : ranges;
  return state;
}

/** True when the PositionInfo holds field 6 and no field 3, i.e. it reads as the long-array layout. */
export function positionInfoUsesLongArray(bytes: Uint8Array): boolean {
  const reader = new ByteReader(bytes);
  let longArray = false;
  while (!reader.atEnd()) {
    const tag = reader.varint32();
    const field = tag >>> 3;
    if (field === 3 && (tag & 7) === WIRE_DELIMITED) return false;
    if (field === 6 && (tag & 7) === WIRE_DELIMITED) longArray = true;
    skipField(reader, field, tag & 7);
  }
  return longArray;
}

export function skipField(reader: ByteReader, field: number, wire: number): void {
  if (field === 0) throw malformed('protobuf field number 0');
  if (wire === WIRE_VARINT) reader.varint64();
  else if (wire === WIRE_FIXED64) reader.take(8);
  else if (wire === WIRE_DELIMITED) reader.take(reader.varint());
  else if (wire === WIRE_FIXED32) reader.take(4);
  else throw malformed(`unsupported protobuf wire type ${wire} for field ${field}`);
}

function readNestedPosition(reader: ByteReader): Position {
  let ledgerId: number | undefined;
  let entryId: number | undefined;
  while (!reader.atEnd()) {
    const tag = reader.varint32();
    if (tag === 0x08) ledgerId = reader.int64(0, 'ledger id');
    else if (tag === 0x10) entryId = reader.int64(-1, 'entry id');
    else skipField(reader, tag >>> 3, tag & 7);
  }
  if (ledgerId === undefined || entryId === undefined) throw malformed('NestedPositionInfo lacks ledgerId or entryId');
  return { ledgerId, entryId };
}

/**
 * An open-closed MessageRange (lower, upper]. A range that crosses ledgers
 * keeps only its upper ledger's part [0, upper], as Pulsar's range set does:
 * without the ledgers' lengths nothing else can be restored.
 */
function readRange(reader: ByteReader, into: AckSet): void {
  let lower: Position | undefined;
  let upper: Position | undefined;
  while (!reader.atEnd()) {
    const tag = reader.varint32();
    if (tag === 0x0a) lower = readNestedPosition(reader.sub(reader.varint()));
    else if (tag === 0x12) upper = readNestedPosition(reader.sub(reader.varint()));
    else skipField(reader, tag >>> 3, tag & 7);
  }
  if (lower === undefined || upper === undefined) throw malformed('MessageRange lacks an endpoint');
  if (upper.entryId < 0) return;
  if (lower.ledgerId === upper.ledgerId) {
    if (upper.entryId < lower.entryId) throw malformed(`MessageRange (${lower.entryId}, ${upper.entryId}] is reversed`);
    if (upper.entryId > lower.entryId) into.addRange(upper.ledgerId, lower.entryId + 1, upper.entryId);
  } else if (lower.ledgerId < upper.ledgerId) {
    into.addRange(upper.ledgerId, 0, upper.entryId);
  } else {
    throw malformed(`MessageRange from ledger ${lower.ledgerId} back to ledger ${upper.ledgerId}`);
  }
}

function readProperty(reader: ByteReader, state: CursorState): void {
  let name: string | undefined;
  let value: bigint | undefined;
  while (!reader.atEnd()) {
    const tag = reader.varint32();
    if (tag === 0x0a) name = reader.string();
    else if (tag === 0x10) {
      reader.varint64();
      value = bigintOf(reader.lo, reader.hi);
    } else skipField(reader, tag >>> 3, tag & 7);
  }
  if (name === undefined || value === undefined) throw malformed('LongProperty lacks its name or value');
  state.properties.set(name, value);
}

/** Reads repeated int64 values given either unpacked (one tag each) or packed, calling visit per value. */
function readInt64s(reader: ByteReader, tag: number, visit: () => void): boolean {
  if (tag === 0x10) {
    reader.varint64();
    visit();
    return true;
  }
  if (tag === 0x12) {
    const packed = reader.sub(reader.varint());
    while (!packed.atEnd()) {
      packed.varint64();
      reader.lo = packed.lo;
      reader.hi = packed.hi;
      visit();
    }
    return true;
  }
  return false;
}

function readBatch(reader: ByteReader, state: CursorState): void {
  let position: Position | undefined;
  const remaining: number[] = [];
  let words = 0;
  while (!reader.atEnd()) {
    const tag = reader.varint32();
    if (tag === 0x0a) {
      position = readNestedPosition(reader.sub(reader.varint()));
      continue;
    }
    const known = readInt64s(reader, tag, () => {
      if (words >= MAX_BATCH_WORDS) throw malformed(`batch deleteSet longer than ${MAX_BATCH_WORDS} words`);
      for (let bit = 0; bit < 64; bit++) {
        const half = bit < 32 ? reader.lo : reader.hi;
        if ((half >>> (bit & 31)) & 1) remaining.push(words * 64 + bit);
      }
      words++;
    });
    if (!known) skipField(reader, tag >>> 3, tag & 7);
  }
  if (position === undefined) throw malformed('BatchedEntryDeletionIndexInfo lacks its position');
  if (position.entryId < 0) throw malformed('BatchedEntryDeletionIndexInfo at entry -1');
  // An empty deleteSet means nothing is left to deliver; the entry is skipped as Pulsar's recovery skips it.
  if (remaining.length > 0)
    state.batchAcks.set(positionKey(position.ledgerId, position.entryId), batchAckFromRemaining(remaining));
}

function readLongList(reader: ByteReader, into: AckSet): void {
  let key: number | undefined;
  const builder = new LongArrayBuilder();
  while (!reader.atEnd()) {
    const tag = reader.varint32();
    if (tag === 0x08) {
      key = reader.int64(0, 'LongListMap key');
      continue;
    }
    const known = readInt64s(reader, tag, () => builder.push(reader.lo, reader.hi));
    if (!known) skipField(reader, tag >>> 3, tag & 7);
  }
  if (key === undefined) throw malformed('LongListMap lacks its key');
  const ledger = builder.finish();
  const existing = into.ledger(key);
  if (existing === undefined) {
    into.adoptLedger(key, ledger);
    return;
  }
  // A ledger listed twice: merge the second list into the first.
  ledger.forEachRun((first, last) => {
    into.addRange(key, first, last);
    return true;
  });
}
