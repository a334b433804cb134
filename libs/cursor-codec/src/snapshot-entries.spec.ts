import fc from 'fast-check';
import { crc32c } from '@node-rs/crc32';
import { LedgerlineError } from '@ledgerline/errors';
import { recoverSnapshot } from './recover-snapshot.js';
import { parseSnapshotEntry, toSnapshotEntries } from './snapshot-entries.js';

const MAX_ENTRY = 1024;
const ID = 'snap-1';
const WHOLE_HEADER = 4 + ID.length + 8;
const CHUNK_HEADER = 4 + ID.length + 12;
const PER_CHUNK = MAX_ENTRY - CHUNK_HEADER;

function payload(length: number, seed = 7): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let index = 0; index < length; index++) bytes[index] = (index * 31 + seed) & 0xff;
  return bytes;
}

async function recoverFrom(entries: Uint8Array[]) {
  return recoverSnapshot(async (entryId) => entries[entryId] ?? new Uint8Array(), entries.length - 1);
}

describe('toSnapshotEntries sizes', () => {
  const sizes = [
    ['one under the single-entry capacity', MAX_ENTRY - WHOLE_HEADER - 1, 1],
    ['exactly the single-entry capacity', MAX_ENTRY - WHOLE_HEADER, 1],
    ['one over the single-entry capacity', MAX_ENTRY - WHOLE_HEADER + 1, 2],
    ['one under maxEntrySize', MAX_ENTRY - 1, 2],
    ['exactly maxEntrySize', MAX_ENTRY, 2],
    ['one over maxEntrySize', MAX_ENTRY + 1, 2],
    ['exactly two chunks of data', 2 * PER_CHUNK, 2],
    ['one over two chunks of data', 2 * PER_CHUNK + 1, 3],
    ['three times maxEntrySize minus one', 3 * MAX_ENTRY - 1, 4],
    ['exactly three times maxEntrySize', 3 * MAX_ENTRY, 4],
    ['three times maxEntrySize plus one', 3 * MAX_ENTRY + 1, 4],
    ['exactly five chunks of data', 5 * PER_CHUNK, 5],
  ] as const;

  it.each(sizes)('%s (%i bytes) takes %i part(s), each within maxEntrySize', async (_name, length, parts) => {
    const bytes = payload(length);
    const entries = toSnapshotEntries(bytes, { maxEntrySize: MAX_ENTRY, snapshotId: ID });
    expect(entries.length).toBe(parts === 1 ? 1 : parts + 1);
    for (const entry of entries) expect(entry.length).toBeLessThanOrEqual(MAX_ENTRY);
    if (parts > 1) {
      expect(entries.slice(0, parts).every((entry, part) => part === parts - 1 || entry.length === MAX_ENTRY)).toBe(
        true,
      );
    }
    const recovered = await recoverFrom(entries);
    expect(recovered?.kind).toBe(parts === 1 ? 'whole' : 'chunked');
    expect(Buffer.from(recovered?.bytes ?? []).equals(Buffer.from(bytes))).toBe(true);
  });

  it('every entry round-trips for any size and entry limit', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 9000 }),
        fc.integer({ min: 1024, max: 3000 }),
        async (length, maxEntrySize) => {
          const bytes = payload(length, length);
          const entries = toSnapshotEntries(bytes, { maxEntrySize });
          for (const entry of entries) expect(entry.length).toBeLessThanOrEqual(maxEntrySize);
          const recovered = await recoverFrom(entries);
          expect(Buffer.from(recovered?.bytes ?? []).equals(Buffer.from(bytes))).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('snapshot entries identify themselves', () => {
  it('as a whole snapshot, chunk k of n of snapshot s, or a footer', () => {
    const [whole] = toSnapshotEntries(payload(10), { snapshotId: 'a' });
    expect(parseSnapshotEntry(whole ?? new Uint8Array())).toMatchObject({
      kind: 'whole',
      snapshotId: 'a',
      checksumMatches: true,
    });
    const bytes = payload(2500);
    const chunked = toSnapshotEntries(bytes, { maxEntrySize: MAX_ENTRY, snapshotId: 'b' });
    expect(chunked.slice(0, 3).map(parseSnapshotEntry)).toEqual(
      [0, 1, 2].map((part) => expect.objectContaining({ kind: 'chunk', snapshotId: 'b', part, numParts: 3 })),
    );
    const footer = JSON.parse(Buffer.from(chunked[3] ?? []).toString('utf8'));
    expect(footer).toEqual({ numParts: 3, length: 2500, crc32c: crc32c(bytes), snapshotId: 'b' });
  });

  it('generates a distinct snapshot id when none is given', () => {
    const first = parseSnapshotEntry(toSnapshotEntries(payload(5))[0] ?? new Uint8Array());
    const second = parseSnapshotEntry(toSnapshotEntries(payload(5))[0] ?? new Uint8Array());
    expect(first.kind === 'whole' && second.kind === 'whole' && first.snapshotId !== second.snapshotId).toBe(true);
  });

  it.each([
    ['maxEntrySize below 1024', { maxEntrySize: 1000 }],
    ['a snapshot id with a space', { snapshotId: 'a b' }],
    ['a snapshot id longer than 64', { snapshotId: 'x'.repeat(65) }],
  ])('rejects %s', (_name, options) => {
    expect(() => toSnapshotEntries(payload(5), options)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });

  it('refuses a snapshot that needs more than maxParts chunks', () => {
    expect(() => toSnapshotEntries(payload(5000), { maxEntrySize: MAX_ENTRY, maxParts: 4 })).toThrow(
      expect.objectContaining({ reason: 'SNAPSHOT_TOO_LARGE', code: 'RESOURCE_EXHAUSTED' }),
    );
  });

  it('refuses an empty payload', () => {
    expect(() => toSnapshotEntries(new Uint8Array())).toThrow(LedgerlineError);
  });
});
