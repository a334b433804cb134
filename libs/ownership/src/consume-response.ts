import { ConsumeResponseSchema } from '@ledgerline/proto';
import { EncodedMessage } from '@ledgerline/rpc';
import type { Delivery } from '@ledgerline/subscriptions';
import type { WriterEntry } from './writer-entry.js';

/**
 * A delivery ready to be written by hand into a ConsumeResponse: the size of
 * its Entry message, and how to write it. The Consume stream sizes and
 * coalesces these, then writes every one into a single buffer
 * (encodeEntries), so payloads are copied once, into the response.
 */
export abstract class WireEntry {
  /** The Entry message's encoded size, without its tag and length. */
  abstract readonly bodyBytes: number;
  /** Writes the Entry message (without its tag and length) at `at`; returns where it ends. */
  abstract writeBody(out: Uint8Array, at: number): number;
}

/** ConsumeResponse's `entry` (field 2) and `more_entries` (field 5), both length-delimited. */
const ENTRY_TAG = (2 << 3) | 2;
const MORE_ENTRIES_TAG = (5 << 3) | 2;

/** The bytes `entry` takes in a ConsumeResponse as one of its entries: tag, length, message. */
export function wireEntryBytes(entry: WireEntry): number {
  return 1 + varintBytes(entry.bodyBytes) + entry.bodyBytes;
}

/**
 * One ConsumeResponse carrying `entries` (the first as `entry`, the rest as
 * `more_entries`), encoded by hand into one buffer of its exact size. Decodes
 * to, and is byte for byte, what encoding the same response from objects by
 * reflection gives (consume-response.spec.ts).
 */
export function encodeEntries(entries: readonly WireEntry[]): EncodedMessage<typeof ConsumeResponseSchema> {
  let size = 0;
  for (const entry of entries) size += wireEntryBytes(entry);
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (let index = 0; index < entries.length; index++) {
    const entry = entries[index]!;
    out[at++] = index === 0 ? ENTRY_TAG : MORE_ENTRIES_TAG;
    at = writeVarint(out, at, entry.bodyBytes);
    at = entry.writeBody(out, at);
  }
  if (at !== size) throw new Error(`a ConsumeResponse of ${size} bytes was written as ${at}`);
  return new EncodedMessage(ConsumeResponseSchema, out);
}

/** Entry's fields: position = 1 (ledger_id = 1, entry_id = 2), first_offset = 3 ... messages = 8. */
const POSITION_TAG = (1 << 3) | 2;
const LEDGER_ID_TAG = 1 << 3;
const ENTRY_ID_TAG = 2 << 3;
const FIRST_OFFSET_TAG = 3 << 3;
const LAST_OFFSET_TAG = 4 << 3;
const BROKER_TIMESTAMP_TAG = 5 << 3;
const NUM_MESSAGES_TAG = 6 << 3;
const REDELIVERY_COUNT_TAG = 7 << 3;
const MESSAGES_TAG = (8 << 3) | 2;
/** Message's payload = 1; its other fields are the entry's encoded tails. */
const PAYLOAD_TAG = (1 << 3) | 2;

/**
 * A delivery of a writer entry as an Entry message: the entry's position,
 * offsets, time and counts, then the messages the consumer still has to get,
 * each its payload followed by the rest of its fields as the shared entry
 * holds them encoded. Per delivery: a few varints and, per message, two
 * copies into the response (payload, tail). Byte for byte what encoding a
 * Fetch's entryMessage by reflection gives (consume-response.spec.ts).
 */
export class WriterEntryDelivery extends WireEntry {
  readonly bodyBytes: number;
  /** Messages and payload bytes this delivery carries (for the out counters). */
  readonly messageCount: number;
  readonly payloadBytes: number;
  private readonly positionBytes: number;
  /** The indexes (into the entry's messages) delivered; undefined: all of them. */
  private readonly selected: readonly number[] | undefined;

  constructor(
    readonly entry: WriterEntry,
    readonly redeliveryCount: number,
    batchIndexes: readonly number[] | undefined,
  ) {
    super();
    const { stored, wire } = entry;
    this.selected = batchIndexes === undefined ? undefined : selectedMessages(wire.batchIndexes, batchIndexes);
    const { ledgerId, entryId } = stored.position;
    this.positionBytes = int64FieldBytes(ledgerId) + int64FieldBytes(entryId);
    let bytes = 1 + varintBytes(this.positionBytes) + this.positionBytes;
    bytes += int64FieldBytes(stored.firstOffset) + int64FieldBytes(stored.lastOffset);
    bytes += int64FieldBytes(stored.brokerTimestampMs);
    bytes += int64FieldBytes(stored.numMessages) + int64FieldBytes(redeliveryCount);
    let payloadBytes = 0;
    const count = this.selected === undefined ? wire.count : this.selected.length;
    for (let n = 0; n < count; n++) {
      const index = this.selected === undefined ? n : this.selected[n]!;
      const body = messageBytes(wire.payloadBytes(index), wire.tailBytes(index));
      bytes += 1 + varintBytes(body) + body;
      payloadBytes += wire.payloadBytes(index);
    }
    this.bodyBytes = bytes;
    this.messageCount = count;
    this.payloadBytes = payloadBytes;
  }

  writeBody(out: Uint8Array, at: number): number {
    const { stored, wire } = this.entry;
    out[at++] = POSITION_TAG;
    at = writeVarint(out, at, this.positionBytes);
    at = writeInt64Field(out, at, LEDGER_ID_TAG, stored.position.ledgerId);
    at = writeInt64Field(out, at, ENTRY_ID_TAG, stored.position.entryId);
    at = writeInt64Field(out, at, FIRST_OFFSET_TAG, stored.firstOffset);
    at = writeInt64Field(out, at, LAST_OFFSET_TAG, stored.lastOffset);
    at = writeInt64Field(out, at, BROKER_TIMESTAMP_TAG, stored.brokerTimestampMs);
    at = writeInt64Field(out, at, NUM_MESSAGES_TAG, stored.numMessages);
    at = writeInt64Field(out, at, REDELIVERY_COUNT_TAG, this.redeliveryCount);
    for (let n = 0; n < this.messageCount; n++) {
      const index = this.selected === undefined ? n : this.selected[n]!;
      const payload = wire.payload(index);
      const tail = wire.tail(index);
      out[at++] = MESSAGES_TAG;
      at = writeVarint(out, at, messageBytes(payload.length, tail.length));
      if (payload.length > 0) {
        out[at++] = PAYLOAD_TAG;
        at = writeVarint(out, at, payload.length);
        out.set(payload, at);
        at += payload.length;
      }
      out.set(tail, at);
      at += tail.length;
    }
    return at;
  }
}

/** A delivery of a writer entry, ready for the wire. */
export function entryDelivery(delivery: Delivery<WriterEntry>): WriterEntryDelivery {
  return new WriterEntryDelivery(delivery.entry, delivery.redeliveryCount, delivery.batchIndexes);
}

/** The messages whose batch index is among `wanted`, in the entry's order (as a Fetch's entryMessage skips the rest). */
function selectedMessages(batchIndexes: Int32Array, wanted: readonly number[]): number[] {
  const set = new Set(wanted);
  const selected: number[] = [];
  for (let index = 0; index < batchIndexes.length; index++) if (set.has(batchIndexes[index]!)) selected.push(index);
  return selected;
}

/** A Message's size: its payload field (left out when empty), then its encoded tail. */
function messageBytes(payloadBytes: number, tailBytes: number): number {
  return (payloadBytes === 0 ? 0 : 1 + varintBytes(payloadBytes) + payloadBytes) + tailBytes;
}

/**
 * A varint field of an Entry (int64 or int32), left out at zero as proto3
 * does. Every one of them is a non-negative safe integer on a delivery
 * (positions, offsets, times, counts); a negative one is a bug.
 */
function int64FieldBytes(value: number): number {
  return value === 0 ? 0 : 1 + varintBytes(value);
}

function writeInt64Field(out: Uint8Array, at: number, tag: number, value: number): number {
  if (value === 0) return at;
  out[at++] = tag;
  return writeVarint(out, at, value);
}

/** The bytes of a non-negative safe integer as a varint. */
export function varintBytes(value: number): number {
  if (!(value >= 0 && Number.isSafeInteger(value))) throw new Error(`${value} is not a non-negative safe integer`);
  let bytes = 1;
  while (value >= 128) {
    value = Math.floor(value / 128);
    bytes++;
  }
  return bytes;
}

/** Writes a non-negative safe integer (checked by varintBytes when sized) as a varint; returns where it ends. */
function writeVarint(out: Uint8Array, at: number, value: number): number {
  while (value >= 128) {
    out[at++] = (value % 128) | 128;
    value = Math.floor(value / 128);
  }
  out[at++] = value;
  return at;
}
