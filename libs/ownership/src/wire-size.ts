import type { MessageInitShape } from '@bufbuild/protobuf';
import type { EntrySchema, MessageSchema } from '@ledgerline/proto';

type MessageInit = MessageInitShape<typeof MessageSchema>;
type EntryInit = MessageInitShape<typeof EntrySchema>;

/**
 * The most bytes one FetchByOffset response carries on the wire, under the
 * gRPC message limit (4 MiB by default on both sides) with room for framing.
 */
export const MAX_FETCH_RESPONSE_BYTES = 4 * 1024 * 1024 - 64 * 1024;

/** Tag and length of a field: 1 byte of tag, up to 5 of length. */
const FIELD_FRAMING = 6;
/** A varint field (int64, uint64, int32) at its widest, with its tag. */
const VARINT_FIELD = 11;
/** Entry's own fields: position (two varints), offsets, time, counts, each at its widest. */
const ENTRY_FIELDS = FIELD_FRAMING + 2 * VARINT_FIELD + 5 * VARINT_FIELD;

function utf8Bytes(text: string | undefined): number {
  return text === undefined ? 0 : Buffer.byteLength(text);
}

/**
 * An upper bound of one Message's protobuf size. Stored batches keep their
 * per-message metadata compact, but on the wire every message carries its own
 * offset, times, sequence id and producer name, so a fetch of many small
 * messages is several times its stored size: bounding a response by stored
 * bytes alone let one outgrow the gRPC limit (RESOURCE_EXHAUSTED).
 */
export function messageWireBytes(message: MessageInit): number {
  let bytes = FIELD_FRAMING + (message.payload?.length ?? 0) + FIELD_FRAMING;
  if (message.key !== undefined) bytes += utf8Bytes(message.key) + FIELD_FRAMING;
  for (const [key, value] of Object.entries(message.properties ?? {})) {
    bytes += FIELD_FRAMING + utf8Bytes(key) + FIELD_FRAMING + utf8Bytes(value) + FIELD_FRAMING;
  }
  bytes += utf8Bytes(message.producerName) + FIELD_FRAMING;
  return bytes + 5 * VARINT_FIELD;
}

/** An upper bound of one Entry's protobuf size, its messages included. */
export function entryWireBytes(entry: EntryInit): number {
  let bytes = ENTRY_FIELDS;
  for (const message of entry.messages ?? []) bytes += messageWireBytes(message);
  return bytes;
}

/**
 * The leading items, as entries, whose wire size stays within `maxBytes`; the
 * first is always kept (an entry is bounded by the largest entry the owner
 * stores), so a reader always makes progress. Items are turned into entries
 * one at a time and the rest are never converted: decoding a batch is the
 * costly part of a fetch, and a fetch may read many more than fit.
 */
export function withinWireBytes<T, E extends EntryInit>(
  items: readonly T[],
  toEntry: (item: T) => E,
  maxBytes: number,
): E[] {
  const entries: E[] = [];
  let bytes = 0;
  for (const item of items) {
    const entry = toEntry(item);
    bytes += entryWireBytes(entry);
    if (entries.length > 0 && bytes > maxBytes) break;
    entries.push(entry);
  }
  return entries;
}
