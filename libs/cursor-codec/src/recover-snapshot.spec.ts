import fc from 'fast-check';
import { ErrorReason, LedgerlineError } from '@ledgerline/errors';
import { AckSet } from './ack-set.js';
import { createCursorState } from './cursor-state.js';
import { decodeCursorState } from './decode-cursor-state.js';
import { encodeCursorState } from './encode-cursor-state.js';
import { recoverSnapshot, SkipReason, type RecoverSnapshotOptions } from './recover-snapshot.js';
import { toSnapshotEntries } from './snapshot-entries.js';

const MAX_ENTRY = 1024;

function payload(length: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let index = 0; index < length; index++) bytes[index] = (index * 13 + seed * 7) & 0xff;
  return bytes;
}

/** A cursor ledger in memory that records which entries were read. */
function ledger(entries: Uint8Array[]) {
  const reads: number[] = [];
  const readEntry = async (entryId: number): Promise<Uint8Array> => {
    reads.push(entryId);
    const entry = entries[entryId];
    if (entry === undefined) throw new Error(`entry ${entryId} does not exist`);
    return entry;
  };
  return { readEntry, reads, last: entries.length - 1 };
}

async function recover(entries: Uint8Array[], options?: RecoverSnapshotOptions) {
  const log = ledger(entries);
  return recoverSnapshot(log.readEntry, log.last, options);
}

async function failure(promise: Promise<unknown>): Promise<LedgerlineError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof LedgerlineError) return error;
    throw error;
  }
  throw new Error('expected a LedgerlineError');
}

const previous = payload(1500, 1);
const newest = payload(3000, 2);
const previousEntries = toSnapshotEntries(previous, { maxEntrySize: MAX_ENTRY, snapshotId: 'previous' });
const newestEntries = toSnapshotEntries(newest, { maxEntrySize: MAX_ENTRY, snapshotId: 'newest' });
const same = (a: Uint8Array | undefined, b: Uint8Array): boolean =>
  a !== undefined && Buffer.from(a).equals(Buffer.from(b));

describe('recoverSnapshot after a crash', () => {
  const newestChunks = newestEntries.length - 1;

  it.each(Array.from({ length: newestChunks }, (_, k) => k + 1))(
    'returns the previous snapshot after %i of the newest chunks and no footer',
    async (written) => {
      const entries = [...previousEntries, ...newestEntries.slice(0, written)];
      const recovered = await recover(entries);
      expect(same(recovered?.bytes, previous)).toBe(true);
      expect(recovered?.kind).toBe('chunked');
      expect(recovered?.fellBack).toBe(false);
      expect(recovered?.skipped.map((skip) => skip.reason)).toEqual(Array(written).fill('CHUNK_WITHOUT_FOOTER'));
    },
  );

  it('returns the newest snapshot once its footer is written', async () => {
    const recovered = await recover([...previousEntries, ...newestEntries]);
    expect(same(recovered?.bytes, newest)).toBe(true);
    expect(recovered).toMatchObject({
      entryId: previousEntries.length + newestChunks,
      firstEntryId: previousEntries.length,
      snapshotId: 'newest',
    });
  });
});

describe('recoverSnapshot with a corrupted byte', () => {
  const corruptChunk = (): Uint8Array[] => {
    const entries = [...previousEntries, ...newestEntries.map((entry) => entry.slice())];
    const chunk = entries[previousEntries.length + 1] ?? new Uint8Array();
    chunk[chunk.length - 10] = (chunk[chunk.length - 10] ?? 0) ^ 0x40;
    return entries;
  };

  it('is CURSOR_SNAPSHOT_CORRUPT (DATA_LOSS) by default', async () => {
    const error = await failure(recover(corruptChunk()));
    expect(error.reason).toBe('CURSOR_SNAPSHOT_CORRUPT');
    expect(error.code).toBe('DATA_LOSS');
    expect(error.details.snapshotId).toBe('newest');
  });

  it('falls back to the previous snapshot and says so when asked to', async () => {
    const recovered = await recover(corruptChunk(), { onCorrupt: 'fallback' });
    expect(same(recovered?.bytes, previous)).toBe(true);
    expect(recovered?.fellBack).toBe(true);
    expect(recovered?.skippedCorrupt).toEqual([
      {
        entryId: previousEntries.length + newestEntries.length - 1,
        snapshotId: 'newest',
        problem: 'chunk 1 checksum mismatch',
      },
    ]);
    expect(recovered?.skipped.every((skip) => skip.reason === SkipReason.CHUNK_OF_CORRUPT_SNAPSHOT)).toBe(true);
  });

  it('detects a corrupted whole-snapshot entry', async () => {
    const [whole] = toSnapshotEntries(payload(100, 3), { snapshotId: 'small' });
    const damaged = (whole ?? new Uint8Array()).slice();
    damaged[damaged.length - 1] = (damaged[damaged.length - 1] ?? 0) ^ 1;
    expect((await failure(recover([...previousEntries, damaged]))).reason).toBe('CURSOR_SNAPSHOT_CORRUPT');
    expect(same((await recover([...previousEntries, damaged], { onCorrupt: 'fallback' }))?.bytes, previous)).toBe(true);
  });

  it('never returns damaged bytes, whichever byte of the newest snapshot changes', async () => {
    const arbitrary = fc.tuple(fc.nat({ max: newestEntries.length - 1 }), fc.nat(), fc.integer({ min: 1, max: 255 }));
    await fc.assert(
      fc.asyncProperty(arbitrary, async ([entryIndex, at, flip]) => {
        const entries = [...previousEntries, ...newestEntries.map((entry) => entry.slice())];
        const target = entries[previousEntries.length + entryIndex] ?? new Uint8Array();
        const offset = at % target.length;
        target[offset] = (target[offset] ?? 0) ^ flip;
        const strict = await recover(entries).catch((error: unknown) => error);
        if (strict instanceof LedgerlineError) expect(strict.reason).toBe('CURSOR_SNAPSHOT_CORRUPT');
        else expect(same((strict as { bytes?: Uint8Array }).bytes, previous)).toBe(true);
        const lenient = await recover(entries, { onCorrupt: 'fallback' });
        expect(same(lenient?.bytes, previous)).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it('reports a footer whose checksum was altered', async () => {
    const entries = [...previousEntries, ...newestEntries.slice(0, -1)];
    const footer = JSON.parse(Buffer.from(newestEntries[newestEntries.length - 1] ?? []).toString('utf8'));
    entries.push(Buffer.from(JSON.stringify({ ...footer, crc32c: (footer.crc32c + 1) >>> 0 })));
    const error = await failure(recover(entries));
    expect(error.details.problem).toBe('snapshot checksum mismatch');
  });
});

describe('recoverSnapshot over unusual logs', () => {
  const tail = newestEntries.slice(1);

  it('passes a log that begins mid-snapshot and finds the snapshot after it', async () => {
    const recovered = await recover([...tail, ...previousEntries]);
    expect(same(recovered?.bytes, previous)).toBe(true);
  });

  it('reports a log holding only the end of a snapshot as not found, without reading below entry 0', async () => {
    const log = ledger(tail);
    const error = await failure(recoverSnapshot(log.readEntry, log.last));
    expect(error).toMatchObject({ code: 'DATA_LOSS', reason: 'CURSOR_SNAPSHOT_NOT_FOUND' });
    expect(Math.min(...log.reads)).toBe(0);
  });

  it('respects firstEntryId when the log was trimmed', async () => {
    const entries = [...previousEntries, ...newestEntries];
    const log = ledger(entries);
    const firstEntryId = previousEntries.length + 1;
    const error = await failure(recoverSnapshot(log.readEntry, log.last, { firstEntryId }));
    expect(error.reason).toBe('CURSOR_SNAPSHOT_NOT_FOUND');
    expect(Math.min(...log.reads)).toBeGreaterThanOrEqual(firstEntryId);
  });

  it('stops after maxScanEntries reads', async () => {
    const junk = Array.from({ length: 100 }, () => new Uint8Array([0xff, 0xff]));
    const log = ledger([...previousEntries, ...junk]);
    const error = await failure(recoverSnapshot(log.readEntry, log.last, { maxScanEntries: 50 }));
    expect(error.reason).toBe('CURSOR_SNAPSHOT_NOT_FOUND');
    expect(error.message).toContain('maxScanEntries 50');
    expect(log.reads.length).toBe(50);
  });

  it('returns null for an empty ledger', async () => {
    expect(await recover([])).toBeNull();
  });

  it('accepts a bare PositionInfo as Pulsar writes it, after torn chunks', async () => {
    const acked = AckSet.fromRanges([{ ledgerId: 3, firstEntryId: 2, lastEntryId: 4 }]);
    const legacy = encodeCursorState(createCursorState({ markDelete: { ledgerId: 3, entryId: 0 }, acked }), {
      format: 'pulsar-ranges',
    }).bytes;
    const recovered = await recover([legacy, ...newestEntries.slice(0, 2)]);
    expect(recovered?.kind).toBe('legacy');
    expect(decodeCursorState(recovered?.bytes ?? new Uint8Array()).acked.equals(acked)).toBe(true);
  });

  it('reads raw chunks with a Pulsar {numParts, length} footer', async () => {
    const state = encodeCursorState(createCursorState({ markDelete: { ledgerId: 1, entryId: 5 } }), {
      format: 'pulsar-ranges',
    }).bytes;
    const middle = Math.floor(state.length / 2);
    const footer = Buffer.from(JSON.stringify({ numParts: 2, length: state.length }));
    const recovered = await recover([state.slice(0, middle), state.slice(middle), footer]);
    expect(recovered?.kind).toBe('pulsar-chunked');
    expect(decodeCursorState(recovered?.bytes ?? new Uint8Array()).markDelete).toEqual({ ledgerId: 1, entryId: 5 });
  });

  it('skips unrecognised entries and reports them', async () => {
    const recovered = await recover([...previousEntries, new Uint8Array([1, 2, 3]), Buffer.from('{not json')]);
    expect(recovered?.skipped.map((skip) => skip.reason)).toEqual(['MALFORMED_ENTRY', 'UNRECOGNIZED_ENTRY']);
  });

  it('lets a storage error through unchanged', async () => {
    const unavailable = new LedgerlineError('UNAVAILABLE', ErrorReason.STORE_UNAVAILABLE, 'redis is down');
    await expect(recoverSnapshot(async () => Promise.reject(unavailable), 3)).rejects.toBe(unavailable);
  });
});
