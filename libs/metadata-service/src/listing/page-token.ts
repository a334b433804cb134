import { crc32c } from '@node-rs/crc32';
import { invalidArgument } from '@ledgerline/errors';
import { MAX_PAGE_TOKEN_BYTES } from '../limits.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

/**
 * The continuation token of a topic listing: the state of a k-way merge over
 * the namespace's buckets. `last` is the last name the listing has passed
 * (every name at or below it, in every bucket, has been handed out); `heads`
 * holds, per bucket, its next name when known, so the next page need not
 * re-read a bucket just to learn where it stands.
 *
 * Wire form (base64url): magic 'T', version 1, bucket count, `last`, then per
 * bucket a tag (0 unknown, 1 exhausted, 2 name) and, for a name, its length
 * shared with `last` and the rest; a CRC32C over the body and the namespace
 * catches tokens that were cut, corrupted or taken from another namespace.
 */
export type BucketHead = { kind: 'unknown' } | { kind: 'done' } | { kind: 'at'; name: string };

export interface ListingState {
  last: string | undefined;
  heads: BucketHead[];
}

const TOKEN_MAGIC = 0x54;
const TOKEN_VERSION = 1;
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export function initialListingState(buckets: number): ListingState {
  return { last: undefined, heads: Array.from({ length: buckets }, () => ({ kind: 'unknown' }) as const) };
}

class ByteWriter {
  readonly #bytes: number[] = [];
  byte(value: number): void {
    this.#bytes.push(value & 0xff);
  }
  varint(value: number): void {
    let rest = value;
    while (rest >= 0x80) {
      this.#bytes.push((rest & 0x7f) | 0x80);
      rest = Math.floor(rest / 128);
    }
    this.#bytes.push(rest);
  }
  text(value: string): void {
    const bytes = encoder.encode(value);
    this.varint(bytes.length);
    for (const byte of bytes) this.#bytes.push(byte);
  }
  get length(): number {
    return this.#bytes.length;
  }
  finish(): Uint8Array {
    return Uint8Array.from(this.#bytes);
  }
}

function sharedPrefix(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  let index = 0;
  while (index < max && a.charCodeAt(index) === b.charCodeAt(index)) index++;
  return index;
}

/**
 * Encodes a listing state for `scope` (the storage namespace). When the token
 * would exceed MAX_PAGE_TOKEN_BYTES, the largest heads are forgotten (made
 * unknown) until it fits: correct, it only costs the next page a re-read.
 */
export function encodePageToken(scope: string, state: ListingState): string {
  const heads = state.heads.map((head) => head);
  const byName = heads
    .map((head, bucket) => ({ head, bucket }))
    .filter((entry) => entry.head.kind === 'at')
    .sort((a, b) => ((a.head as { name: string }).name < (b.head as { name: string }).name ? 1 : -1));
  for (;;) {
    const body = encodeBody(state.last, heads);
    if (body.length + 4 <= (MAX_PAGE_TOKEN_BYTES * 3) / 4 || byName.length === 0) return seal(scope, body);
    const drop = byName.splice(0, Math.max(1, Math.ceil(byName.length / 4)));
    for (const entry of drop) heads[entry.bucket] = { kind: 'unknown' };
  }
}

function encodeBody(last: string | undefined, heads: readonly BucketHead[]): Uint8Array {
  const writer = new ByteWriter();
  writer.byte(TOKEN_MAGIC);
  writer.byte(TOKEN_VERSION);
  writer.varint(heads.length);
  writer.byte(last === undefined ? 0 : 1);
  writer.text(last ?? '');
  for (const head of heads) {
    if (head.kind === 'unknown') writer.byte(0);
    else if (head.kind === 'done') writer.byte(1);
    else {
      writer.byte(2);
      const shared = last === undefined ? 0 : sharedPrefix(last, head.name);
      writer.varint(shared);
      writer.text(head.name.slice(shared));
    }
  }
  return writer.finish();
}

function seal(scope: string, body: Uint8Array): string {
  const sealed = new Uint8Array(body.length + 4);
  sealed.set(body);
  new DataView(sealed.buffer).setUint32(body.length, crc32c(body, crc32c(scope)));
  return Buffer.from(sealed).toString('base64url');
}

function badToken(why: string) {
  return invalidArgument(
    MetadataServiceReason.INVALID_PAGE_TOKEN,
    `the page token is not one this listing handed out: ${why}`,
  );
}

/** Reads a byte string with every length checked before it is used. */
class ByteReader {
  #offset = 0;
  constructor(readonly bytes: Uint8Array) {}
  byte(): number {
    if (this.#offset >= this.bytes.length) throw badToken('it ends early');
    return this.bytes[this.#offset++]!;
  }
  varint(): number {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      const byte = this.byte();
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return value;
    }
    throw badToken('a length is too long');
  }
  text(): string {
    const length = this.varint();
    if (length > this.bytes.length - this.#offset) throw badToken('a name runs past its end');
    const slice = this.bytes.subarray(this.#offset, this.#offset + length);
    this.#offset += length;
    try {
      return decoder.decode(slice);
    } catch {
      throw badToken('a name is not UTF-8');
    }
  }
  get done(): boolean {
    return this.#offset === this.bytes.length;
  }
}

/** Decodes and checks a token from encodePageToken for `scope` and a namespace of `buckets` buckets. */
export function decodePageToken(token: string, scope: string, buckets: number): ListingState {
  if (token.length > MAX_PAGE_TOKEN_BYTES || !/^[A-Za-z0-9_-]+$/.test(token)) throw badToken('it is malformed');
  const sealed = new Uint8Array(Buffer.from(token, 'base64url'));
  if (sealed.length < 8) throw badToken('it is too short');
  const body = sealed.subarray(0, sealed.length - 4);
  const checksum = new DataView(sealed.buffer, sealed.byteOffset).getUint32(sealed.length - 4);
  if (checksum !== crc32c(body, crc32c(scope))) throw badToken('its checksum does not match this namespace');
  const reader = new ByteReader(body);
  if (reader.byte() !== TOKEN_MAGIC || reader.byte() !== TOKEN_VERSION) throw badToken('unknown format');
  if (reader.varint() !== buckets) throw badToken('it was made for a different bucket count');
  const hasLast = reader.byte() === 1;
  const lastText = reader.text();
  const last = hasLast ? lastText : undefined;
  const heads: BucketHead[] = [];
  for (let bucket = 0; bucket < buckets; bucket++) heads.push(readHead(reader, last));
  if (!reader.done) throw badToken('it has trailing bytes');
  return { last, heads };
}

function readHead(reader: ByteReader, last: string | undefined): BucketHead {
  const tag = reader.byte();
  if (tag === 0) return { kind: 'unknown' };
  if (tag === 1) return { kind: 'done' };
  if (tag !== 2) throw badToken('unknown bucket tag');
  const shared = reader.varint();
  if (shared > (last?.length ?? 0)) throw badToken('a shared prefix is longer than the last name');
  const name = (last ?? '').slice(0, shared) + reader.text();
  if (last !== undefined && name <= last) throw badToken('a bucket head is not after the last name');
  return { kind: 'at', name };
}
