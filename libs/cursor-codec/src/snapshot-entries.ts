import { randomUUID } from 'node:crypto';
import { crc32c } from '@node-rs/crc32';
import { ByteReader } from './byte-reader.js';
import { ByteWriter } from './byte-writer.js';
import { checkIntegerOption, invalidOption, invalidState, tooLarge } from './errors.js';

// Entries of a cursor ledger, specified in ../SNAPSHOT_ENTRIES.md. Every
// entry says what it is: a whole snapshot, chunk k of n of snapshot s, or
// the JSON footer that closes a chunked snapshot.

/** First byte of a whole-snapshot or chunk entry; wire type 7, so never a PositionInfo, and not '{'. */
export const ENTRY_MAGIC = 0xb7;
export const ENTRY_VERSION = 1;
export const ENTRY_KIND_WHOLE = 1;
export const ENTRY_KIND_CHUNK = 2;

export const DEFAULT_MAX_ENTRY_SIZE = 1 << 20;
export const MIN_MAX_ENTRY_SIZE = 1024;
export const MAX_MAX_ENTRY_SIZE = 1 << 30;
export const DEFAULT_MAX_SNAPSHOT_PARTS = 4096;
const SNAPSHOT_ID_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/;

export interface SnapshotEntriesOptions {
  /** Largest entry to produce, header included. Default 1 MiB; at least 1024. */
  maxEntrySize?: number;
  /** Names the snapshot in every entry; 1-64 characters of [A-Za-z0-9._:-]. Default: a random UUID. */
  snapshotId?: string;
  /** Most chunks one snapshot may take; more is SNAPSHOT_TOO_LARGE. Default 4096. */
  maxParts?: number;
}

/** The JSON footer, with Pulsar's numParts and length plus our checksum and snapshot id. */
export interface SnapshotFooter {
  numParts: number;
  length: number;
  crc32c: number;
  snapshotId: string;
}

function wholeHeaderSize(snapshotId: string): number {
  return 4 + snapshotId.length + 8;
}

function chunkHeaderSize(snapshotId: string): number {
  return 4 + snapshotId.length + 12;
}

function writeHeader(out: ByteWriter, kind: number, snapshotId: string): void {
  out.byte(ENTRY_MAGIC);
  out.byte(ENTRY_VERSION);
  out.byte(kind);
  out.byte(snapshotId.length);
  out.bytes(Buffer.from(snapshotId, 'ascii'));
}

/**
 * The entries to append to the cursor ledger for one encoded snapshot: one
 * whole-snapshot entry when it fits in maxEntrySize, otherwise N chunks
 * followed by the footer. The footer goes last, so a crash part way leaves
 * chunks without a footer, which recovery passes over.
 */
export function toSnapshotEntries(bytes: Uint8Array, options: SnapshotEntriesOptions = {}): Uint8Array[] {
  const maxEntrySize = options.maxEntrySize ?? DEFAULT_MAX_ENTRY_SIZE;
  const maxParts = options.maxParts ?? DEFAULT_MAX_SNAPSHOT_PARTS;
  const snapshotId = options.snapshotId ?? randomUUID();
  checkIntegerOption(maxEntrySize, 'maxEntrySize', MIN_MAX_ENTRY_SIZE, MAX_MAX_ENTRY_SIZE);
  checkIntegerOption(maxParts, 'maxParts', 1, 1 << 20);
  if (typeof snapshotId !== 'string' || !SNAPSHOT_ID_PATTERN.test(snapshotId)) {
    throw invalidOption(`snapshotId must be 1-64 characters of [A-Za-z0-9._:-], got ${JSON.stringify(snapshotId)}`);
  }
  if (!(bytes instanceof Uint8Array) || bytes.length === 0) throw invalidState('a snapshot needs a non-empty payload');
  const checksum = crc32c(bytes);
  if (wholeHeaderSize(snapshotId) + bytes.length <= maxEntrySize) {
    const out = new ByteWriter(wholeHeaderSize(snapshotId) + bytes.length);
    writeHeader(out, ENTRY_KIND_WHOLE, snapshotId);
    out.uint32BigEndian(checksum);
    out.uint32BigEndian(bytes.length);
    out.bytes(bytes);
    return [out.finish()];
  }
  const perChunk = maxEntrySize - chunkHeaderSize(snapshotId);
  const numParts = Math.ceil(bytes.length / perChunk);
  if (numParts > maxParts) {
    throw tooLarge(
      `a ${bytes.length}-byte snapshot needs ${numParts} chunks of ${maxEntrySize} bytes, over maxParts ${maxParts}`,
    );
  }
  const entries: Uint8Array[] = [];
  for (let part = 0; part < numParts; part++) {
    const data = bytes.subarray(part * perChunk, Math.min(bytes.length, (part + 1) * perChunk));
    const out = new ByteWriter(chunkHeaderSize(snapshotId) + data.length);
    writeHeader(out, ENTRY_KIND_CHUNK, snapshotId);
    out.uint32BigEndian(part);
    out.uint32BigEndian(numParts);
    out.uint32BigEndian(crc32c(data));
    out.bytes(data);
    entries.push(out.finish());
  }
  const footer: SnapshotFooter = { numParts, length: bytes.length, crc32c: checksum, snapshotId };
  entries.push(new TextEncoder().encode(JSON.stringify(footer)));
  return entries;
}

/** What one cursor-ledger entry turned out to be. */
export type ParsedEntry =
  | { kind: 'whole'; snapshotId: string; payload: Uint8Array; checksumMatches: boolean }
  | { kind: 'chunk'; snapshotId: string; part: number; numParts: number; data: Uint8Array; checksumMatches: boolean }
  | { kind: 'footer'; footer: SnapshotFooter }
  /** A footer as Pulsar (PIP-381) writes it: only numParts and length, raw chunks before it. */
  | { kind: 'pulsar-footer'; numParts: number; length: number }
  /** Starts like one of our entries or a footer but does not parse. */
  | { kind: 'malformed'; problem: string }
  /** Anything else: possibly a bare PositionInfo or compact state (the caller checks by decoding). */
  | { kind: 'other' };

/** Identifies an entry without trusting it: every length is checked before it is read. */
export function parseSnapshotEntry(bytes: Uint8Array): ParsedEntry {
  if (bytes.length > 0 && bytes[0] === ENTRY_MAGIC) return parseFramed(bytes);
  if (bytes.length > 0 && bytes[0] === 0x7b) return parseFooter(bytes);
  return { kind: 'other' };
}

function parseFramed(bytes: Uint8Array): ParsedEntry {
  try {
    const reader = new ByteReader(bytes, 1);
    const version = reader.byte();
    if (version !== ENTRY_VERSION) return { kind: 'malformed', problem: `unknown entry version ${version}` };
    const kind = reader.byte();
    const snapshotId = Buffer.from(reader.take(reader.byte())).toString('latin1');
    if (!SNAPSHOT_ID_PATTERN.test(snapshotId)) return { kind: 'malformed', problem: 'bad snapshot id' };
    if (kind === ENTRY_KIND_WHOLE) {
      const checksum = reader.uint32BigEndian();
      const length = reader.uint32BigEndian();
      if (length !== reader.remaining)
        return { kind: 'malformed', problem: `payload length ${length} != ${reader.remaining}` };
      const payload = reader.take(length);
      return { kind: 'whole', snapshotId, payload, checksumMatches: crc32c(payload) === checksum };
    }
    if (kind === ENTRY_KIND_CHUNK) {
      const part = reader.uint32BigEndian();
      const numParts = reader.uint32BigEndian();
      const checksum = reader.uint32BigEndian();
      const data = reader.take(reader.remaining);
      if (part >= numParts) return { kind: 'malformed', problem: `chunk ${part} of ${numParts}` };
      return { kind: 'chunk', snapshotId, part, numParts, data, checksumMatches: crc32c(data) === checksum };
    }
    return { kind: 'malformed', problem: `unknown entry kind ${kind}` };
  } catch (error) {
    return { kind: 'malformed', problem: error instanceof Error ? error.message : String(error) };
  }
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function parseFooter(bytes: Uint8Array): ParsedEntry {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return { kind: 'malformed', problem: 'footer is not valid JSON' };
  }
  if (typeof json !== 'object' || json === null) return { kind: 'malformed', problem: 'footer is not an object' };
  const { numParts, length, crc32c: checksum, snapshotId } = json as Record<string, unknown>;
  if (!isCount(numParts) || numParts < 1 || !isCount(length)) {
    return { kind: 'malformed', problem: 'footer lacks a valid numParts or length' };
  }
  if (checksum === undefined && snapshotId === undefined) return { kind: 'pulsar-footer', numParts, length };
  if (
    !isCount(checksum) ||
    checksum > 0xffffffff ||
    typeof snapshotId !== 'string' ||
    !SNAPSHOT_ID_PATTERN.test(snapshotId)
  ) {
    return { kind: 'malformed', problem: 'footer has a bad crc32c or snapshotId' };
  }
  return { kind: 'footer', footer: { numParts, length, crc32c: checksum, snapshotId } };
}
