import { invalidArgument } from '@ledgerline/errors';
import { ManagedLedgerReason } from '../reasons.js';

/** Format marker and version of the stored table, so the decoder can evolve. */
const MAGIC = 0x4c;
const VERSION = 1;
/** A run count or value beyond this is corrupt input, not a table. */
const MAX_RUNS = 10_000_000;

/**
 * The offset of every entry of one ledger, stored as runs of equal batch
 * sizes: a producer that always sends batches of the same size costs one
 * run per ledger. It answers "which offsets does entry e hold" without a
 * storage read, which is what an exact message backlog needs for every
 * acknowledged range.
 */
export class EntryOffsetTable {
  private readonly runFirstEntry: number[] = [];
  private readonly runFirstOffset: number[] = [];
  private readonly runBatchSize: number[] = [];
  private entries = 0;
  private last: number;

  constructor(readonly firstOffset: number) {
    this.last = firstOffset - 1;
  }

  get entryCount(): number {
    return this.entries;
  }

  get lastOffset(): number {
    return this.last;
  }

  get runCount(): number {
    return this.runBatchSize.length;
  }

  /** Records the next entry, whose last message has offset `index`. */
  append(index: number): void {
    const batchSize = index - this.last;
    if (!Number.isSafeInteger(batchSize) || batchSize < 1) {
      throw new Error(`entry offsets must increase: ${index} after ${this.last}`);
    }
    const runs = this.runBatchSize.length;
    if (runs === 0 || this.runBatchSize[runs - 1] !== batchSize) {
      this.runFirstEntry.push(this.entries);
      this.runFirstOffset.push(this.last + 1);
      this.runBatchSize.push(batchSize);
    }
    this.entries++;
    this.last = index;
  }

  /** The offset of the last message of entry `entryId`; firstOffset - 1 for entry -1. */
  lastOffsetOf(entryId: number): number {
    if (entryId < 0) return this.firstOffset - 1;
    if (entryId >= this.entries) throw new Error(`entry ${entryId} is beyond the table's ${this.entries} entries`);
    const run = this.runOf(entryId);
    const batchSize = this.runBatchSize[run] as number;
    return (this.runFirstOffset[run] as number) + (entryId - (this.runFirstEntry[run] as number) + 1) * batchSize - 1;
  }

  /**
   * The entry holding message `offset` and that entry's first offset, or
   * undefined when the table does not reach it: what a lookup by offset needs,
   * answered from memory where the sparse index would read entries.
   */
  entryHolding(offset: number): { entryId: number; firstOffset: number } | undefined {
    if (offset < this.firstOffset || offset > this.last) return undefined;
    let low = 0;
    let high = this.runFirstOffset.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if ((this.runFirstOffset[middle] as number) <= offset) low = middle;
      else high = middle - 1;
    }
    const batchSize = this.runBatchSize[low] as number;
    const inRun = Math.floor((offset - (this.runFirstOffset[low] as number)) / batchSize);
    return {
      entryId: (this.runFirstEntry[low] as number) + inRun,
      firstOffset: (this.runFirstOffset[low] as number) + inRun * batchSize,
    };
  }

  /** Messages held by entries first..last inclusive. */
  messagesIn(firstEntryId: number, lastEntryId: number): number {
    return this.lastOffsetOf(lastEntryId) - this.lastOffsetOf(firstEntryId - 1);
  }

  private runOf(entryId: number): number {
    let low = 0;
    let high = this.runFirstEntry.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if ((this.runFirstEntry[middle] as number) <= entryId) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  /** [magic, version, run count, (run length, batch size)...] as varints. */
  encode(): Uint8Array {
    const values: number[] = [this.runBatchSize.length];
    for (let run = 0; run < this.runBatchSize.length; run++) {
      const nextFirst = this.runFirstEntry[run + 1] ?? this.entries;
      values.push(nextFirst - (this.runFirstEntry[run] as number), this.runBatchSize[run] as number);
    }
    const out: number[] = [MAGIC, VERSION];
    for (const value of values) writeVarint(out, value);
    return Uint8Array.from(out);
  }

  static decode(bytes: Uint8Array, firstOffset: number): EntryOffsetTable {
    if (bytes.length < 2 || bytes[0] !== MAGIC || bytes[1] !== VERSION) throw corrupt('bad magic or version');
    const reader = { bytes, position: 2 };
    const runs = readVarint(reader);
    if (runs > MAX_RUNS) throw corrupt(`${runs} runs`);
    const table = new EntryOffsetTable(firstOffset);
    for (let run = 0; run < runs; run++) {
      const length = readVarint(reader);
      const batchSize = readVarint(reader);
      if (length < 1 || batchSize < 1) throw corrupt('an empty run');
      table.appendRun(length, batchSize);
    }
    if (reader.position !== bytes.length) throw corrupt('trailing bytes');
    return table;
  }

  private appendRun(length: number, batchSize: number): void {
    this.runFirstEntry.push(this.entries);
    this.runFirstOffset.push(this.last + 1);
    this.runBatchSize.push(batchSize);
    this.entries += length;
    this.last += length * batchSize;
    if (!Number.isSafeInteger(this.last)) throw corrupt('offsets overflow');
  }
}

function writeVarint(out: number[], value: number): void {
  let rest = value;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
}

function readVarint(reader: { bytes: Uint8Array; position: number }): number {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 8; i++) {
    const byte = reader.bytes[reader.position++];
    if (byte === undefined) throw corrupt('truncated varint');
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return value;
    scale *= 0x80;
  }
  throw corrupt('varint too long');
}

function corrupt(detail: string) {
  return invalidArgument(
    ManagedLedgerReason.ENTRY_OFFSET_TABLE_CORRUPT,
    `stored entry offsets do not decode: ${detail}`,
  );
}
