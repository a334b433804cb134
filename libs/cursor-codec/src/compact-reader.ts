import { inflateRawSync } from 'node:zlib';
import { LedgerlineError } from '@ledgerline/errors';
import { AckSet } from './ack-set.js';
import { BitmapContainer } from './bitmap-container.js';
import { ByteReader, bigintOf } from './byte-reader.js';
import { BITMAP_WORDS, LAST_OFFSET, REGION_SIZE, type Container } from './container.js';
import {
  BLOCK_BITMAP,
  BLOCK_FULL,
  BLOCK_RUNS,
  COMPACT_MAGIC,
  COMPACT_VERSION,
  FLAG_DEFLATE,
} from './compact-writer.js';
import { MAX_BATCH_SIZE, MAX_PROPERTIES, createCursorState, type CursorState } from './cursor-state.js';
import { CursorCodecReason, malformed } from './errors.js';
import { LedgerAcks } from './ledger-acks.js';
import { positionKey } from './position.js';
import { RunContainer } from './run-container.js';

/** Highest region index a safe-integer entry id can fall in. */
const MAX_REGION = Math.floor(Number.MAX_SAFE_INTEGER / REGION_SIZE);

/** Decodes the compact format (see ../COMPACT_FORMAT.md); maxBodyBytes bounds a deflated body. */
export function readCompact(bytes: Uint8Array, maxBodyBytes: number): CursorState {
  const header = new ByteReader(bytes);
  if (header.byte() !== COMPACT_MAGIC) throw malformed('not a compact cursor state');
  const version = header.byte();
  if (version !== COMPACT_VERSION) {
    throw new LedgerlineError(
      'FAILED_PRECONDITION',
      CursorCodecReason.CURSOR_STATE_UNSUPPORTED_VERSION,
      `compact cursor state version ${version} is newer than this codec (reads version ${COMPACT_VERSION})`,
    );
  }
  const flags = header.byte();
  if ((flags & ~FLAG_DEFLATE) !== 0) throw malformed(`unknown compact flags 0x${flags.toString(16)}`);
  const reader = flags & FLAG_DEFLATE ? new ByteReader(inflateBody(header, maxBodyBytes)) : header;
  const state = createCursorState();
  state.markDelete = { ledgerId: readMarkDeleteId(reader), entryId: readMarkDeleteId(reader) };
  state.acked = readLedgers(reader);
  readBatches(reader, state);
  readProperties(reader, state);
  if (!reader.atEnd()) throw malformed(`${reader.remaining} trailing bytes after the compact cursor state`);
  return state;
}

function inflateBody(header: ByteReader, maxBodyBytes: number): Uint8Array {
  const length = header.varint();
  if (length > maxBodyBytes) throw malformed(`compact body of ${length} bytes exceeds the ${maxBodyBytes}-byte limit`);
  let body: Buffer;
  try {
    body = inflateRawSync(header.take(header.remaining), { maxOutputLength: Math.max(1, length) });
  } catch (error) {
    throw new LedgerlineError(
      'INVALID_ARGUMENT',
      CursorCodecReason.CURSOR_STATE_MALFORMED,
      'compact body does not inflate',
      {
        cause: error,
      },
    );
  }
  if (body.length !== length) throw malformed(`compact body inflated to ${body.length} bytes, header says ${length}`);
  return body;
}

function readMarkDeleteId(reader: ByteReader): number {
  const value = reader.zigzag();
  if (value < -1) throw malformed(`mark-delete id ${value} below -1`);
  return value;
}

function readLedgers(reader: ByteReader): AckSet {
  const acked = new AckSet();
  const ledgerCount = reader.varint();
  let ledgerId = -1;
  for (let index = 0; index < ledgerCount; index++) {
    ledgerId += reader.varint() + 1;
    if (!Number.isSafeInteger(ledgerId)) throw malformed('ledger id beyond 2^53');
    const ledger = readLedger(reader);
    if (ledger.isEmpty()) throw malformed(`ledger ${ledgerId} has no blocks`);
    acked.adoptLedger(ledgerId, ledger);
  }
  return acked;
}

function readLedger(reader: ByteReader): LedgerAcks {
  const ledger = new LedgerAcks();
  const blockCount = reader.varint();
  let nextRegion = 0;
  for (let index = 0; index < blockCount; index++) {
    const region = nextRegion + reader.varint();
    const kind = reader.byte();
    if (kind === BLOCK_FULL) {
      const lastRegion = region + reader.varint();
      if (lastRegion > MAX_REGION) throw malformed('full span beyond 2^53');
      ledger.addRange(region * REGION_SIZE, Math.min(Number.MAX_SAFE_INTEGER, (lastRegion + 1) * REGION_SIZE - 1));
      nextRegion = lastRegion + 1;
      continue;
    }
    if (region > MAX_REGION) throw malformed('region beyond 2^53');
    const container = kind === BLOCK_RUNS ? readRuns(reader) : kind === BLOCK_BITMAP ? readBitmap(reader) : undefined;
    if (container === undefined) throw malformed(`unknown block kind ${kind}`);
    if (region * REGION_SIZE + container.lastOffset() > Number.MAX_SAFE_INTEGER) throw malformed('entry beyond 2^53');
    ledger.appendContainer(region, container);
    nextRegion = region + 1;
  }
  return ledger;
}

function readRuns(reader: ByteReader): Container {
  const runCount = reader.varint();
  // Each run takes at least two bytes, which bounds the loop by the input.
  // A region holds at most 2^15 runs.
  if (runCount === 0 || runCount > REGION_SIZE / 2 || runCount * 2 > reader.remaining) {
    throw malformed(`bad run count ${runCount}`);
  }
  let previousEnd = -1;
  const container = RunContainer.withCapacity(runCount);
  for (let index = 0; index < runCount; index++) {
    const gap = reader.varint();
    if (index > 0 && gap === 0) throw malformed('adjacent runs in a region');
    const first = previousEnd + 1 + gap;
    const last = first + reader.varint();
    if (last > LAST_OFFSET) throw malformed(`run end ${last} outside its region`);
    container.appendRun(first, last);
    previousEnd = last;
  }
  return container;
}

function readBitmap(reader: ByteReader): Container {
  const firstWord = reader.varint();
  const wordCount = reader.varint();
  if (wordCount === 0 || firstWord + wordCount > BITMAP_WORDS) throw malformed('bitmap words outside their region');
  const words = new Uint32Array(BITMAP_WORDS);
  for (let word = firstWord; word < firstWord + wordCount; word++) words[word] = reader.uint32LittleEndian();
  const container = BitmapContainer.fromWords(words);
  if (container.cardinality === 0) throw malformed('empty bitmap block');
  return container;
}

function readBatches(reader: ByteReader, state: CursorState): void {
  const count = reader.varint();
  if (count * 4 > reader.remaining) throw malformed(`bad batch count ${count}`);
  let ledgerId = 0;
  let entryId = -1;
  for (let index = 0; index < count; index++) {
    const ledgerDelta = reader.varint();
    ledgerId += ledgerDelta;
    entryId = ledgerDelta === 0 ? entryId + reader.varint() + 1 : reader.varint();
    if (!Number.isSafeInteger(ledgerId) || !Number.isSafeInteger(entryId))
      throw malformed('batch position beyond 2^53');
    const batchSize = reader.varint();
    const ackedCount = reader.varint();
    if (batchSize < 1 || batchSize > MAX_BATCH_SIZE || ackedCount >= batchSize || ackedCount > reader.remaining) {
      throw malformed(`bad batch at ${ledgerId}:${entryId}`);
    }
    const ackedIndexes: number[] = [];
    let previous = -1;
    for (let acked = 0; acked < ackedCount; acked++) {
      previous += reader.varint() + 1;
      if (previous >= batchSize) throw malformed(`batch index ${previous} not below ${batchSize}`);
      ackedIndexes.push(previous);
    }
    state.batchAcks.set(positionKey(ledgerId, entryId), { batchSize, ackedIndexes });
  }
}

function readProperties(reader: ByteReader, state: CursorState): void {
  const count = reader.varint();
  if (count > MAX_PROPERTIES) throw malformed(`${count} properties exceed ${MAX_PROPERTIES}`);
  for (let index = 0; index < count; index++) {
    const name = reader.string();
    reader.varint64();
    state.properties.set(name, bigintOf(reader.lo, reader.hi));
  }
  const cursorCount = reader.varint();
  if (cursorCount > MAX_PROPERTIES) throw malformed(`${cursorCount} cursor properties exceed ${MAX_PROPERTIES}`);
  for (let index = 0; index < cursorCount; index++) {
    const name = reader.string();
    state.cursorProperties.set(name, reader.string());
  }
}
