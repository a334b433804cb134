import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import type { ManagedLedgerEntry } from '@ledgerline/managed-ledger';
import { decodeMessageEntry, type DecodedMessage } from '@ledgerline/message-format';
import type { DispatchEntry } from '@ledgerline/subscriptions';

/**
 * An entry of a writer topic's ledgers as subscriptions dispatch it, on the
 * writer owner and on read-only owners alike: decoded once per stored entry
 * object and shared by every subscription and consumer that reads it (see
 * writerEntry), laid out for Consume responses written by hand
 * (consume-response.ts).
 */
export interface WriterEntry extends DispatchEntry {
  readonly stored: ManagedLedgerEntry;
  readonly wire: EntryWire;
}

/**
 * An entry's messages as a Consume response carries them, worked out once
 * per entry: where each message's payload lies in the stored bytes (never
 * copied here), and the rest of each message's fields (key to batch_index)
 * already encoded, in field-number order, as reflection would encode them,
 * one message after another in one buffer.
 */
export class EntryWire {
  constructor(
    /** The stored entry's bytes (the message layout), whose ranges the payloads are. */
    private readonly bytes: Uint8Array,
    /** Per message, three numbers: where its payload starts and ends in `bytes`, and where its tail ends in `tails`. */
    private readonly layout: Uint32Array,
    /** Each message's encoded fields after its payload, one message after another. */
    private readonly tails: Uint8Array,
    /** Each message's batch index (-1 for an entry that is not a batch, or does not decode). */
    readonly batchIndexes: Int32Array,
  ) {}

  get count(): number {
    return this.batchIndexes.length;
  }

  payloadBytes(index: number): number {
    return this.layout[3 * index + 1]! - this.layout[3 * index]!;
  }

  payload(index: number): Uint8Array {
    return this.bytes.subarray(this.layout[3 * index], this.layout[3 * index + 1]);
  }

  tailBytes(index: number): number {
    return this.layout[3 * index + 2]! - this.tailStart(index);
  }

  tail(index: number): Uint8Array {
    return this.tails.subarray(this.tailStart(index), this.layout[3 * index + 2]);
  }

  private tailStart(index: number): number {
    return index === 0 ? 0 : this.layout[3 * index - 1]!;
  }

  /** What keeping this form costs beside its entry: the encoded fields, 16 bytes of layout per message, its objects. */
  get retainedBytes(): number {
    return WIRE_OBJECT_BYTES + this.tails.length + 16 * this.count;
  }
}

/** About what an EntryWire's objects and its WriterEntry take, beside their arrays' contents. */
const WIRE_OBJECT_BYTES = 640;
/** What the managed ledger's entry cache counts per entry beside its payload (its ENTRY_OVERHEAD_BYTES). */
const CACHED_ENTRY_OVERHEAD_BYTES = 128;

/**
 * The shared dispatch form of each stored entry object. The managed ledger
 * hands out the same object for every read its entry cache answers (the
 * append's own object while tailing, the one a store read put there while
 * catching up), so every subscription reading it finds its decoded form here:
 * the checksum is checked and MessageMetadata parsed once per entry, where the
 * bytes came from the store (or the append), not once per reader. A form is
 * kept as long as its entry object is (the cache's bound, or a reader still
 * holding it), and only when it costs no more than the entry does in the cache
 * (keepable): so the forms kept take at most the cache's own byte bound again.
 * A form larger than that (a batch of many tiny messages, a tiny entry) is
 * made again by each read, as every read did before.
 */
const decodedEntries = new WeakMap<ManagedLedgerEntry, WriterEntry>();

export function writerEntry(stored: ManagedLedgerEntry): WriterEntry {
  let entry = decodedEntries.get(stored);
  if (entry === undefined) {
    entry = decodeWriterEntry(stored);
    if (keepable(entry)) decodedEntries.set(stored, entry);
  }
  return entry;
}

function keepable(entry: WriterEntry): boolean {
  return entry.wire.retainedBytes <= entry.stored.payload.byteLength + CACHED_ENTRY_OVERHEAD_BYTES;
}

class DecodedWriterEntry implements WriterEntry {
  readonly position: ManagedLedgerEntry['position'];
  readonly numMessages: number;
  readonly sizeBytes: number;

  constructor(
    readonly stored: ManagedLedgerEntry,
    readonly key: string | undefined,
    readonly wire: EntryWire,
  ) {
    this.position = stored.position;
    this.numMessages = stored.numMessages;
    this.sizeBytes = stored.payload.length;
  }
}

/** One writer for every tail, reused: encoding is synchronous and `finish` hands out a copy. */
const tailWriter = new BinaryWriter();

function decodeWriterEntry(stored: ManagedLedgerEntry): WriterEntry {
  const bytes = stored.payload;
  let decoded;
  try {
    decoded = decodeMessageEntry(bytes);
  } catch {
    // As entryContents: an entry that does not decode (foreign bytes, a checksum mismatch) goes as one keyless raw message.
    const tail = rawTail(stored.firstOffset);
    const wire = new EntryWire(bytes, Uint32Array.of(0, bytes.length, tail.length), tail, Int32Array.of(-1));
    return new DecodedWriterEntry(stored, undefined, wire);
  }
  const { messages } = decoded;
  const count = messages.length;
  const layout = new Uint32Array(3 * count);
  const batchIndexes = new Int32Array(count);
  const tails: Uint8Array[] = [];
  let tailBytes = 0;
  for (let index = 0; index < count; index++) {
    const message = messages[index]!;
    // Decoded payloads are views of the stored bytes: kept as where they lie in them.
    if (message.payload.buffer !== bytes.buffer) throw new Error('invariant: a decoded payload is a view of its entry');
    const start = message.payload.byteOffset - bytes.byteOffset;
    const tail = messageTail(message, stored.firstOffset + index);
    tails.push(tail);
    tailBytes += tail.length;
    layout[3 * index] = start;
    layout[3 * index + 1] = start + message.payload.length;
    layout[3 * index + 2] = tailBytes;
    batchIndexes[index] = message.batchIndex;
  }
  const wire = new EntryWire(bytes, layout, joined(tails, tailBytes), batchIndexes);
  // The entry's own ordering key, not its first message's: a batch's messages may carry keys of their own.
  return new DecodedWriterEntry(stored, decoded.header.key, wire);
}

function joined(parts: readonly Uint8Array[], bytes: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(bytes);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * Message fields 2 to 9 of one decoded message, exactly as encoding the
 * object entryContents makes for it would write them: proto3 zero values left
 * out, `key` written when present, map entries in the properties' key order.
 */
function messageTail(message: DecodedMessage, offset: number): Uint8Array {
  const writer = tailWriter;
  if (message.key !== undefined) writer.tag(2, WireType.LengthDelimited).string(message.key);
  const properties = message.properties;
  for (const name of Object.keys(properties)) {
    writer.tag(3, WireType.LengthDelimited).fork();
    writer.tag(1, WireType.LengthDelimited).string(name);
    writer.tag(2, WireType.LengthDelimited).string(properties[name]!);
    writer.join();
  }
  if (message.eventTimeMs !== 0) writer.tag(4, WireType.Varint).int64(message.eventTimeMs);
  if (message.publishTimeMs !== 0) writer.tag(5, WireType.Varint).int64(message.publishTimeMs);
  if (message.producerName !== '') writer.tag(6, WireType.LengthDelimited).string(message.producerName);
  if (message.sequenceId !== 0n) writer.tag(7, WireType.Varint).uint64(message.sequenceId);
  if (offset !== 0) writer.tag(8, WireType.Varint).int64(offset);
  if (message.batchIndex !== 0) writer.tag(9, WireType.Varint).int32(message.batchIndex);
  return writer.finish();
}

/** The fields after the payload of an entry handed out raw: its offset, and batch index -1. */
function rawTail(offset: number): Uint8Array {
  const writer = tailWriter;
  if (offset !== 0) writer.tag(8, WireType.Varint).int64(offset);
  writer.tag(9, WireType.Varint).int32(-1);
  return writer.finish();
}
