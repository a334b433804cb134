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
    else if (field === 3 && wire === WIRE_DELIMITED) readRange(reader, reader.varint(), ranges);
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
  readNestedPositionInPlace(reader, reader.remaining);
  return { ledgerId: nested.ledgerId, entryId: nested.entryId };
}

/** Where readNestedPositionInPlace leaves its result: ranges are read without allocating. */
const nested = { ledgerId: 0, entryId: 0 };

/** Reads a NestedPositionInfo of `length` bytes from the reader's current position into `nested`. */
function readNestedPositionInPlace(reader: ByteReader, length: number): void {
  if (length > reader.remaining) throw malformed(`NestedPositionInfo length ${length} past the end`);
  const outerEnd = reader.end;
  reader.end = reader.position + length;
  let seen = 0;
  while (!reader.atEnd()) {
    const tag = reader.varint32();
    if (tag === 0x08) {
      nested.ledgerId = reader.int64(0, 'ledger id');
      seen |= 1;
    } else if (tag === 0x10) {
      nested.entryId = reader.int64(-1, 'entry id');
      seen |= 2;
    } else skipField(reader, tag >>> 3, tag & 7);
  }
  reader.end = outerEnd;
  if (seen !== 3) throw malformed('NestedPositionInfo lacks ledgerId or entryId');
}

/**
 * An open-closed MessageRange (lower, upper] of `length` bytes. A range that
 * crosses ledgers keeps only its upper ledger's part [0, upper], as Pulsar's
 * range set does: without the ledgers' lengths nothing else can be restored.
 */
function readRange(reader: ByteReader, length: number, into: AckSet): void {
  if (length > reader.remaining) throw malformed(`MessageRange length ${length} past the end`);
  const outerEnd = reader.end;
  reader.end = reader.position + length;
  let lowerLedger = -1;
  let lowerEntry = -1;
  let upperLedger = -1;
  let upperEntry = -1;
  let seen = 0;
  while (!reader.atEnd()) {
    const tag = reader.varint32();
    if (tag !== 0x0a && tag !== 0x12) {
      skipField(reader, tag >>> 3, tag & 7);
      continue;
    }
    readNestedPositionInPlace(reader, reader.varint());
    if (tag === 0x0a) {
      lowerLedger = nested.ledgerId;
      lowerEntry = nested.entryId;
      seen |= 1;
    } else {
      upperLedger = nested.ledgerId;
      upperEntry = nested.entryId;
      seen |= 2;
    }
  }
  reader.end = outerEnd;
  if (seen !== 3) throw malformed('MessageRange lacks an endpoint');
  addOpenClosed(into, lowerLedger, lowerEntry, upperLedger, upperEntry);
}

function addOpenClosed(
  into: AckSet,
  lowerLedger: number,
  lowerEntry: number,
  upperLedger: number,
  upperEntry: number,
): void {
  if (upperEntry < 0) return;
  if (lowerLedger === upperLedger) {
    if (upperEntry < lowerEntry) throw malformed(`MessageRange (${lowerEntry}, ${upperEntry}] is reversed`);
    if (upperEntry > lowerEntry) into.addRange(upperLedger, lowerEntry + 1, upperEntry);
  } else if (lowerLedger < upperLedger) {
    into.addRange(upperLedger, 0, upperEntry);
  } else {
    throw malformed(`MessageRange from ledger ${lowerLedger} back to ledger ${upperLedger}`);
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
