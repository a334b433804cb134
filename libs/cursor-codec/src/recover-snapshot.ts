import { crc32c } from '@node-rs/crc32';
import { LedgerlineError } from '@ledgerline/errors';
import { decodeCursorState } from './decode-cursor-state.js';
import { CursorCodecReason, checkIntegerOption, invalidOption } from './errors.js';
import { DEFAULT_MAX_SNAPSHOT_PARTS, parseSnapshotEntry, type SnapshotFooter } from './snapshot-entries.js';

export const DEFAULT_MAX_SCAN_ENTRIES = 8192;

/** Reads one entry of the cursor ledger. Errors it throws (a store being down) propagate unchanged. */
export type ReadEntry = (entryId: number) => Promise<Uint8Array>;

export interface RecoverSnapshotOptions {
  /**
   * 'throw' (the default, strict): the newest snapshot that fails to verify
   * is a CURSOR_SNAPSHOT_CORRUPT error (DATA_LOSS). 'fallback': it is listed
   * in skippedCorrupt and the scan goes on to the previous snapshot.
   */
  onCorrupt?: 'throw' | 'fallback';
  /** Most entries read in one recovery, chunks included. Default 8192. */
  maxScanEntries?: number;
  /** A footer claiming more chunks than this is corrupt. Default 4096. */
  maxParts?: number;
  /** First entry id the log holds; nothing below it is read. Default 0. */
  firstEntryId?: number;
}

/** Why recovery passed over an entry of the cursor ledger (not an error: recovery went on). */
export const SkipReason = {
  /** A chunk with no footer after it: a snapshot whose writer stopped part way (a torn write). */
  CHUNK_WITHOUT_FOOTER: 'CHUNK_WITHOUT_FOOTER',
  /** A chunk of a snapshot already reported in skippedCorrupt (fallback mode). */
  CHUNK_OF_CORRUPT_SNAPSHOT: 'CHUNK_OF_CORRUPT_SNAPSHOT',
  /** Starts like one of our entries or a footer but does not parse. */
  MALFORMED_ENTRY: 'MALFORMED_ENTRY',
  /** Neither one of our entries nor a decodable cursor state. */
  UNRECOGNIZED_ENTRY: 'UNRECOGNIZED_ENTRY',
  /** A footer whose chunks lie before the first entry of the log. */
  SNAPSHOT_BEGINS_BEFORE_LOG: 'SNAPSHOT_BEGINS_BEFORE_LOG',
} as const;

export type SkipReason = (typeof SkipReason)[keyof typeof SkipReason];

export interface SkippedEntry {
  entryId: number;
  reason: SkipReason;
  detail: string;
}

/** A snapshot that failed verification (checksum, chunk sequence or length). */
export interface CorruptSnapshot {
  /** The whole-snapshot entry or the footer. */
  entryId: number;
  snapshotId?: string;
  problem: string;
}

export interface RecoveredSnapshot {
  /** The encoded cursor state; pass it to decodeCursorState. */
  bytes: Uint8Array;
  /** The whole-snapshot entry, the footer, or the legacy entry. */
  entryId: number;
  /** The first entry of the snapshot (its first chunk; entryId otherwise). */
  firstEntryId: number;
  /**
   * whole / chunked: written by toSnapshotEntries and verified by CRC32C.
   * legacy: a bare PositionInfo (or compact state) as Pulsar writes it, verified by decoding.
   * pulsar-chunked: raw chunks and a {numParts, length} footer (PIP-381), verified by length and decoding.
   */
  kind: 'whole' | 'chunked' | 'legacy' | 'pulsar-chunked';
  snapshotId?: string;
  /** Entries passed over, newest first (torn chunks, unrecognised entries). */
  skipped: SkippedEntry[];
  /** Newer snapshots that failed verification and were passed over (fallback mode only). */
  skippedCorrupt: CorruptSnapshot[];
  /** True when a newer snapshot was corrupt and an older one was returned. */
  fellBack: boolean;
  entriesRead: number;
}

type Assembly = { ok: true; bytes: Uint8Array } | { ok: false; problem: string; beforeLog?: boolean };

/** Reads entries for one recovery, enforcing maxScanEntries. */
class EntryScanner {
  entriesRead = 0;
  constructor(
    private readonly readEntry: ReadEntry,
    readonly maxScanEntries: number,
  ) {}

  canRead(count: number): boolean {
    return this.entriesRead + count <= this.maxScanEntries;
  }

  async read(entryId: number): Promise<Uint8Array> {
    this.entriesRead++;
    const bytes = await this.readEntry(entryId);
    if (!(bytes instanceof Uint8Array)) throw invalidOption(`readEntry(${entryId}) did not resolve to a Uint8Array`);
    return bytes;
  }
}

/**
 * Finds the newest complete snapshot in a cursor ledger, scanning backwards
 * from lastEntryId past torn writes. Returns null for an empty ledger
 * (lastEntryId below firstEntryId). See ../SNAPSHOT_ENTRIES.md for every case.
 */
export async function recoverSnapshot(
  readEntry: ReadEntry,
  lastEntryId: number,
  options: RecoverSnapshotOptions = {},
): Promise<RecoveredSnapshot | null> {
  const onCorrupt = options.onCorrupt ?? 'throw';
  if (onCorrupt !== 'throw' && onCorrupt !== 'fallback') throw invalidOption(`onCorrupt must be throw or fallback`);
  const maxScanEntries = options.maxScanEntries ?? DEFAULT_MAX_SCAN_ENTRIES;
  const maxParts = options.maxParts ?? DEFAULT_MAX_SNAPSHOT_PARTS;
  const firstEntryId = options.firstEntryId ?? 0;
  checkIntegerOption(maxScanEntries, 'maxScanEntries', 1, 1 << 24);
  checkIntegerOption(maxParts, 'maxParts', 1, 1 << 20);
  checkIntegerOption(firstEntryId, 'firstEntryId', 0, Number.MAX_SAFE_INTEGER);
  if (!Number.isSafeInteger(lastEntryId) || lastEntryId < -1) {
    throw invalidOption(`lastEntryId must be a safe integer >= -1, got ${String(lastEntryId)}`);
  }
  if (lastEntryId < firstEntryId) return null;
  const recovery = new Recovery(new EntryScanner(readEntry, maxScanEntries), onCorrupt, maxParts, firstEntryId);
  for (let entryId = lastEntryId; entryId >= firstEntryId; entryId--) {
    const outcome = await recovery.examine(entryId);
    if (outcome === 'stop') break;
    if (outcome !== undefined) return outcome;
  }
  throw recovery.notFound();
}

type Found = Omit<RecoveredSnapshot, 'skipped' | 'skippedCorrupt' | 'fellBack' | 'entriesRead'>;

/** The state of one backward scan: what was skipped, what was corrupt, how much was read. */
class Recovery {
  private readonly skipped: SkippedEntry[] = [];
  private readonly skippedCorrupt: CorruptSnapshot[] = [];
  private readonly corruptIds = new Set<string>();

  constructor(
    private readonly scanner: EntryScanner,
    private readonly onCorrupt: 'throw' | 'fallback',
    private readonly maxParts: number,
    private readonly firstEntryId: number,
  ) {}

  /** Looks at one entry: a snapshot found, undefined to go on to the previous entry, or 'stop' at the scan bound. */
  async examine(entryId: number): Promise<RecoveredSnapshot | undefined | 'stop'> {
    if (!this.scanner.canRead(1)) return 'stop';
    const bytes = await this.scanner.read(entryId);
    const entry = parseSnapshotEntry(bytes);
    switch (entry.kind) {
      case 'whole':
        if (entry.checksumMatches) {
          return this.found({
            bytes: entry.payload,
            entryId,
            firstEntryId: entryId,
            kind: 'whole',
            snapshotId: entry.snapshotId,
          });
        }
        this.corrupt({ entryId, snapshotId: entry.snapshotId, problem: 'whole-snapshot checksum mismatch' });
        return undefined;
      case 'footer':
        return this.examineFooter(entryId, entry.footer.numParts, entry.footer, entry.footer.length);
      case 'pulsar-footer':
        return this.examineFooter(entryId, entry.numParts, undefined, entry.length);
      case 'chunk': {
        const torn = !this.corruptIds.has(entry.snapshotId);
        const detail = `chunk ${entry.part + 1} of ${entry.numParts} of snapshot ${entry.snapshotId}`;
        this.skip(entryId, torn ? SkipReason.CHUNK_WITHOUT_FOOTER : SkipReason.CHUNK_OF_CORRUPT_SNAPSHOT, detail);
        return undefined;
      }
      case 'malformed':
        this.skip(entryId, SkipReason.MALFORMED_ENTRY, entry.problem);
        return undefined;
      case 'other':
        if (decodes(bytes)) return this.found({ bytes, entryId, firstEntryId: entryId, kind: 'legacy' });
        this.skip(entryId, SkipReason.UNRECOGNIZED_ENTRY, `${bytes.length} bytes`);
        return undefined;
    }
  }

  private async examineFooter(
    entryId: number,
    numParts: number,
    footer: SnapshotFooter | undefined,
    length: number,
  ): Promise<RecoveredSnapshot | undefined | 'stop'> {
    const snapshotId = footer?.snapshotId;
    if (numParts > this.maxParts) {
      this.corrupt({ entryId, snapshotId, problem: `footer claims ${numParts} parts, over maxParts ${this.maxParts}` });
      return undefined;
    }
    if (entryId - numParts < this.firstEntryId) {
      this.skip(entryId, SkipReason.SNAPSHOT_BEGINS_BEFORE_LOG, `${numParts} chunks before entry ${entryId}`);
      return undefined;
    }
    if (!this.scanner.canRead(numParts)) return 'stop';
    const assembly =
      footer === undefined
        ? await assembleRaw(this.scanner, entryId, numParts, length)
        : await assembleChunks(this.scanner, entryId, footer);
    if (!assembly.ok) {
      this.corrupt({ entryId, snapshotId, problem: assembly.problem });
      return undefined;
    }
    const kind = footer === undefined ? 'pulsar-chunked' : 'chunked';
    return this.found({ bytes: assembly.bytes, entryId, firstEntryId: entryId - numParts, kind, snapshotId });
  }

  private found(result: Found): RecoveredSnapshot {
    return {
      ...result,
      skipped: this.skipped,
      skippedCorrupt: this.skippedCorrupt,
      fellBack: this.skippedCorrupt.length > 0,
      entriesRead: this.scanner.entriesRead,
    };
  }

  private skip(entryId: number, reason: SkipReason, detail: string): void {
    this.skipped.push({ entryId, reason, detail });
  }

  private corrupt(failure: CorruptSnapshot): void {
    if (this.onCorrupt === 'throw') throw corruptError(failure);
    this.skippedCorrupt.push(failure);
    if (failure.snapshotId !== undefined) this.corruptIds.add(failure.snapshotId);
  }

  notFound(): LedgerlineError {
    return notFoundError(this.scanner.entriesRead, this.scanner.maxScanEntries, this.skipped, this.skippedCorrupt);
  }
}

function decodes(bytes: Uint8Array): boolean {
  if (bytes.length === 0) return false;
  try {
    decodeCursorState(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Reads the chunks before a footer and checks each one, then the whole payload's length and CRC32C. */
async function assembleChunks(scanner: EntryScanner, footerId: number, footer: SnapshotFooter): Promise<Assembly> {
  const first = footerId - footer.numParts;
  const parts: Uint8Array[] = [];
  let length = 0;
  let checksum = 0;
  for (let part = 0; part < footer.numParts; part++) {
    const entry = parseSnapshotEntry(await scanner.read(first + part));
    if (entry.kind !== 'chunk' || entry.snapshotId !== footer.snapshotId) {
      return { ok: false, problem: `entry ${first + part} is not a chunk of snapshot ${footer.snapshotId}` };
    }
    if (entry.part !== part || entry.numParts !== footer.numParts) {
      return {
        ok: false,
        problem: `entry ${first + part} is chunk ${entry.part} of ${entry.numParts}, expected ${part} of ${footer.numParts}`,
      };
    }
    if (!entry.checksumMatches) return { ok: false, problem: `chunk ${part} checksum mismatch` };
    length += entry.data.length;
    if (length > footer.length) return { ok: false, problem: `chunks exceed the footer length ${footer.length}` };
    checksum = crc32c(entry.data, checksum);
    parts.push(entry.data);
  }
  if (length !== footer.length)
    return { ok: false, problem: `chunks hold ${length} bytes, footer says ${footer.length}` };
  if (checksum !== footer.crc32c) return { ok: false, problem: 'snapshot checksum mismatch' };
  return { ok: true, bytes: Buffer.concat(parts, length) };
}

/** Pulsar's PIP-381 layout: raw chunks with no header; verified by length and by decoding. */
async function assembleRaw(
  scanner: EntryScanner,
  footerId: number,
  numParts: number,
  expected: number,
): Promise<Assembly> {
  const parts: Uint8Array[] = [];
  let length = 0;
  for (let part = 0; part < numParts; part++) {
    const data = await scanner.read(footerId - numParts + part);
    length += data.length;
    if (length > expected) return { ok: false, problem: `chunks exceed the footer length ${expected}` };
    parts.push(data);
  }
  if (length !== expected) return { ok: false, problem: `chunks hold ${length} bytes, footer says ${expected}` };
  const bytes = Buffer.concat(parts, length);
  return decodes(bytes) ? { ok: true, bytes } : { ok: false, problem: 'reassembled chunks are not a cursor state' };
}

function corruptError(failure: CorruptSnapshot): LedgerlineError {
  return new LedgerlineError(
    'DATA_LOSS',
    CursorCodecReason.CURSOR_SNAPSHOT_CORRUPT,
    `cursor snapshot at entry ${failure.entryId} does not verify: ${failure.problem}`,
    { details: { entryId: String(failure.entryId), snapshotId: failure.snapshotId ?? '', problem: failure.problem } },
  );
}

function notFoundError(
  entriesRead: number,
  maxScanEntries: number,
  skipped: SkippedEntry[],
  skippedCorrupt: CorruptSnapshot[],
): LedgerlineError {
  const reason =
    skippedCorrupt.length > 0 ? CursorCodecReason.CURSOR_SNAPSHOT_CORRUPT : CursorCodecReason.CURSOR_SNAPSHOT_NOT_FOUND;
  const bound = entriesRead >= maxScanEntries ? ` (stopped at maxScanEntries ${maxScanEntries})` : '';
  return new LedgerlineError(
    'DATA_LOSS',
    reason,
    `no complete cursor snapshot in the ${entriesRead} entries read${bound}; ${skipped.length} skipped, ${skippedCorrupt.length} corrupt`,
    {
      details: {
        entriesRead: String(entriesRead),
        skipped: String(skipped.length),
        corrupt: String(skippedCorrupt.length),
      },
    },
  );
}
