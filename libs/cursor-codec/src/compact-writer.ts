import { deflateRawSync } from 'node:zlib';
import type { AckSet } from './ack-set.js';
import * as byteWriter from './byte-writer.js';
import { ByteWriter } from './byte-writer.js';
import { BITMAP_WORDS, type Container } from './container.js';
import type { PositionedBatchAck } from './cursor-state.js';
import type { LedgerAcks } from './ledger-acks.js';
import type { Position } from './position.js';
import { RunList } from './word-runs.js';

// Module-local copies of imports used in hot loops: under the CommonJS interop
// this code runs with (tsx, Jest), every use of an imported binding is a getter call.
const { varintSize } = byteWriter;

// The compact format, specified in ../COMPACT_FORMAT.md. Sized by holes: each
// region of 2^16 entries is written as gap/length varint pairs or as a
// bitmap, whichever is smaller, and fully acknowledged regions as one span.

/** First byte of a compact encoding: a protobuf tag with wire type 7, which no PositionInfo can start with. */
export const COMPACT_MAGIC = 0xa7;
export const COMPACT_VERSION = 1;
export const FLAG_DEFLATE = 0x01;
export const BLOCK_RUNS = 0;
export const BLOCK_BITMAP = 1;
export const BLOCK_FULL = 2;
/** Bodies smaller than this are never worth deflating. */
const DEFLATE_MIN_BODY_BYTES = 256;

export type CompactCompression = 'auto' | 'none' | 'deflate';

export interface CompactParts {
  markDelete: Position;
  acked: AckSet;
  batches: readonly PositionedBatchAck[];
  properties: readonly (readonly [string, bigint | number])[];
  cursorProperties: readonly (readonly [string, string])[];
}

export function writeCompact(parts: CompactParts, compression: CompactCompression): Uint8Array {
  const body = new ByteWriter(1024);
  body.zigzag(parts.markDelete.ledgerId);
  body.zigzag(parts.markDelete.entryId);
  writeLedgers(body, parts.acked);
  writeBatches(body, parts.batches);
  body.varint(parts.properties.length);
  for (const [name, value] of parts.properties) {
    body.string(name);
    const big = BigInt.asUintN(64, BigInt(value));
    body.varint64(Number(big & 0xffffffffn), Number(big >> 32n));
  }
  body.varint(parts.cursorProperties.length);
  for (const [name, value] of parts.cursorProperties) {
    body.string(name);
    body.string(value);
  }
  return frame(body.finish(), compression);
}

/** Adds the header; deflates the body when asked to, or under 'auto' when that is smaller. */
function frame(body: Uint8Array, compression: CompactCompression): Uint8Array {
  const plain = new ByteWriter(body.length + 3);
  plain.byte(COMPACT_MAGIC);
  plain.byte(COMPACT_VERSION);
  plain.byte(0);
  plain.bytes(body);
  if (compression === 'none' || (compression === 'auto' && body.length < DEFLATE_MIN_BODY_BYTES)) {
    return plain.finish();
  }
  const deflated = deflateRawSync(body, { level: 6 });
  const packed = new ByteWriter(deflated.length + 3 + varintSize(body.length));
  packed.byte(COMPACT_MAGIC);
  packed.byte(COMPACT_VERSION);
  packed.byte(FLAG_DEFLATE);
  packed.varint(body.length);
  packed.bytes(deflated);
  const compressed = packed.finish();
  return compression === 'deflate' || compressed.length < plain.position ? compressed : plain.finish();
}

function writeLedgers(out: ByteWriter, acked: AckSet): void {
  const ids = acked.ledgerIds();
  out.varint(ids.length);
  let previous = -1;
  // One scratch bitmap and run list for every region of every ledger.
  const scratch = new Uint32Array(BITMAP_WORDS);
  const runs = new RunList();
  for (const ledgerId of ids) {
    const ledger = acked.ledger(ledgerId);
    if (ledger === undefined) continue;
    out.varint(ledgerId - previous - 1);
    previous = ledgerId;
    writeLedger(out, ledger, scratch, runs);
  }
}

function writeLedger(out: ByteWriter, ledger: LedgerAcks, scratch: Uint32Array, runs: RunList): void {
  out.varint(ledger.blockCount);
  let nextRegion = 0;
  ledger.forEachBlock((firstRegion, container, lastRegion) => {
    out.varint(firstRegion - nextRegion);
    nextRegion = lastRegion + 1;
    if (container === null) {
      out.byte(BLOCK_FULL);
      out.varint(lastRegion - firstRegion);
    } else {
      writeContainer(out, container, scratch, runs);
    }
  });
}

/** Writes a region as runs or as a trimmed bitmap, whichever takes fewer bytes. */
function writeContainer(out: ByteWriter, container: Container, scratch: Uint32Array, runs: RunList): void {
  const firstWord = container.firstOffset() >>> 5;
  const wordCount = (container.lastOffset() >>> 5) - firstWord + 1;
  const bitmapBytes = varintSize(firstWord) + varintSize(wordCount) + wordCount * 4;
  // Every run costs at least two bytes, so a bitmap this small wins without measuring the runs.
  if (container.runCount * 2 < bitmapBytes) {
    runs.clear();
    container.collectRuns(0, runs);
    if (runsSize(runs) <= bitmapBytes) {
      out.byte(BLOCK_RUNS);
      out.varint(runs.length);
      let previousEnd = -1;
      for (let run = 0; run < runs.length; run++) {
        const first = runs.firsts[run] ?? 0;
        const last = runs.lasts[run] ?? 0;
        out.varint(first - previousEnd - 1);
        out.varint(last - first);
        previousEnd = last;
      }
      return;
    }
  }
  container.writeWords(scratch);
  out.byte(BLOCK_BITMAP);
  out.varint(firstWord);
  out.varint(wordCount);
  for (let word = firstWord; word < firstWord + wordCount; word++) out.uint32LittleEndian(scratch[word] ?? 0);
}

function runsSize(runs: RunList): number {
  let size = varintSize(runs.length);
  let previousEnd = -1;
  for (let run = 0; run < runs.length; run++) {
    const first = runs.firsts[run] ?? 0;
    const last = runs.lasts[run] ?? 0;
    size += varintSize(first - previousEnd - 1) + varintSize(last - first);
    previousEnd = last;
  }
  return size;
}

function writeBatches(out: ByteWriter, batches: readonly PositionedBatchAck[]): void {
  out.varint(batches.length);
  let previous: Position = { ledgerId: 0, entryId: -1 };
  for (const { ledgerId, entryId, batch } of batches) {
    const ledgerDelta = ledgerId - previous.ledgerId;
    out.varint(ledgerDelta);
    out.varint(ledgerDelta === 0 ? entryId - previous.entryId - 1 : entryId);
    previous = { ledgerId, entryId };
    out.varint(batch.batchSize);
    out.varint(batch.ackedIndexes.length);
    let previousIndex = -1;
    for (const index of batch.ackedIndexes) {
      out.varint(index - previousIndex - 1);
      previousIndex = index;
    }
  }
}
