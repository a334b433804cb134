import type { CodeName } from '@ledgerline/errors';
import { expectFailure, taggedEntry, type SuiteContext } from './conformance-support.js';
import { LedgerStoreReason as R } from '../errors.js';
import {
  DEFAULT_LIST_PAGE,
  DEFAULT_MAX_APPEND_BYTES,
  DEFAULT_MAX_APPEND_ENTRIES,
  DEFAULT_MAX_ENTRY_BYTES,
  DEFAULT_MAX_READ_ENTRIES,
  MAX_LIST_PAGE,
  MAX_OWNER_TAGS_BYTES,
  type LedgerStore,
} from '../store.js';

/*
 * Edges of the ledger store every backend must pass (part of the conformance
 * suite): ids at the top of the safe integer range, empty and largest
 * entries, reads as long as the read limit, listing while ledgers come and
 * go, and every limit the README documents, at its default value.
 */

const MAX_ID = Number.MAX_SAFE_INTEGER;
const hex = (data: Uint8Array) => Buffer.from(data).toString('hex');

export function describeEdgeCases({ fresh, pair }: SuiteContext): void {
  it('appends, reads, lists, fences and deletes ledgers whose ids are near 2^53', async () => {
    const [store, other] = await pair();
    const ids = [MAX_ID, MAX_ID - 1, MAX_ID - 2];
    for (const id of ids) {
      const writer = await store.create(id, { ownerTags: { id: String(id) } });
      expect(writer.ledgerId).toBe(id);
      expect(await writer.append([taggedEntry(1, 0), taggedEntry(1, 1)])).toBe(0);
    }
    for (const id of ids) {
      expect((await other.read(id, 0, 1)).map((e) => hex(e.data))).toEqual(
        [taggedEntry(1, 0), taggedEntry(1, 1)].map(hex),
      );
      expect(await other.info(id)).toMatchObject({ ledgerId: id, lastAddConfirmed: 1, ownerTags: { id: String(id) } });
    }
    expect(await other.list({ after: MAX_ID - 3 })).toEqual({ ledgerIds: [MAX_ID - 2, MAX_ID - 1, MAX_ID] });
    expect(await other.list({ after: MAX_ID - 3, limit: 2 })).toEqual({
      ledgerIds: [MAX_ID - 2, MAX_ID - 1],
      next: MAX_ID - 1,
    });
    expect(await other.list({ after: MAX_ID - 1 })).toEqual({ ledgerIds: [MAX_ID] });
    expect(await other.list({ after: MAX_ID })).toEqual({ ledgerIds: [] });
    expect(await other.fence(MAX_ID)).toBe(1);
    await store.delete(MAX_ID - 1);
    expect(await other.info(MAX_ID - 1)).toBeUndefined();
    expect((await other.list({ after: MAX_ID - 3 })).ledgerIds).toEqual([MAX_ID - 2, MAX_ID]);
    await expectFailure(other.read(MAX_ID - 1, 0, 0), 'NOT_FOUND', R.ledgerNotFound);
    expect((await other.info(MAX_ID))?.state).toBe('fenced');
  });

  it('stores empty entries of every kind of empty view, and ledgers made only of them', async () => {
    const store = await fresh();
    const writer = await store.create(70);
    const empties = [
      new Uint8Array(0),
      Buffer.alloc(0),
      new Uint8Array(16).subarray(9, 9),
      Buffer.from('abc').subarray(3),
    ];
    expect(await writer.append(empties)).toBe(0);
    expect(await writer.append([new Uint8Array(0)])).toBe(4);
    expect(await writer.append([Uint8Array.of(7), new Uint8Array(0)])).toBe(5);
    const read = await store.read(70, 0, 6);
    expect(read.map((e) => [e.entryId, e.data.byteLength])).toEqual([
      [0, 0],
      [1, 0],
      [2, 0],
      [3, 0],
      [4, 0],
      [5, 1],
      [6, 0],
    ]);
    expect(await store.info(70)).toMatchObject({ lastAddConfirmed: 6, sizeBytes: 1 });
  });

  it('stores an entry of exactly the largest size and reads it back whole', async () => {
    const store = await fresh();
    const writer = await store.create(71);
    const largest = new Uint8Array(DEFAULT_MAX_ENTRY_BYTES);
    for (let i = 0; i < largest.length; i += 4096) largest[i] = (i >>> 12) & 0xff;
    largest[largest.length - 1] = 0xfe;
    expect(await writer.append([largest, Uint8Array.of(1)])).toBe(0);
    const [entry, after] = await store.read(71, 0, 1);
    expect(entry!.data.byteLength).toBe(DEFAULT_MAX_ENTRY_BYTES);
    expect(Buffer.from(entry!.data).equals(Buffer.from(largest))).toBe(true);
    expect(hex(after!.data)).toBe('01');
    expect((await store.info(71))?.sizeBytes).toBe(DEFAULT_MAX_ENTRY_BYTES + 1);
  });

  it('serves reads exactly as long as the read limit, anywhere in a longer ledger', async () => {
    const maxReadEntries = 50;
    const store = await fresh({ limits: { maxReadEntries } });
    const writer = await store.create(72);
    const entries = Array.from({ length: 3 * maxReadEntries + 7 }, (_, i) => taggedEntry(i, 0, 8));
    expect(await writer.append(entries)).toBe(0);
    const lac = entries.length - 1;
    for (const first of [0, 1, maxReadEntries - 1, maxReadEntries, lac - maxReadEntries + 1]) {
      const read = await store.read(72, first, first + maxReadEntries - 1);
      expect(read.map((e) => e.entryId)).toEqual(Array.from({ length: maxReadEntries }, (_, i) => first + i));
      expect(read.map((e) => hex(e.data))).toEqual(entries.slice(first, first + maxReadEntries).map(hex));
      await expectFailure(store.read(72, first, first + maxReadEntries), 'INVALID_ARGUMENT', R.readRangeTooLarge);
    }
    // A range over the limit is refused as too large before the LAC is consulted.
    await expectFailure(store.read(72, lac, lac + maxReadEntries), 'INVALID_ARGUMENT', R.readRangeTooLarge);
    await expectFailure(store.read(72, lac - 1, lac + 1), 'OUT_OF_RANGE', R.entryNotConfirmed);
  });

  it('lists every ledger that exists throughout, once and in order, while others are created and deleted', async () => {
    const [pager, mutator] = await pair();
    const stable = Array.from({ length: 40 }, (_, i) => i * 10 + 5);
    const doomed = Array.from({ length: 40 }, (_, i) => i * 10 + 7);
    for (const id of [...stable, ...doomed]) await mutator.create(id);
    let mutating = true;
    const mutations = (async () => {
      for (let i = 0; i < 40; i++) {
        await mutator.create(i * 10 + 3);
        await mutator.delete(doomed[(i * 17) % doomed.length]!);
        if (i % 3 === 0) await mutator.delete(i * 10 + 3);
      }
      mutating = false;
    })();
    const scans: number[][] = [];
    // Scans run while the mutations do (at least three, at most a bounded number).
    for (let scan = 0; scan < 200 && (mutating || scans.length < 3); scan++) scans.push(await scanAll(pager, 7));
    await mutations;
    scans.push(await scanAll(pager, 7));
    for (const ids of scans) {
      for (let i = 1; i < ids.length; i++) expect(ids[i]!).toBeGreaterThan(ids[i - 1]!);
      expect(stable.filter((id) => !ids.includes(id))).toEqual([]);
    }
    const expected = [...stable, ...Array.from({ length: 40 }, (_, i) => i * 10 + 3).filter((_, i) => i % 3 !== 0)];
    expect(scans[scans.length - 1]).toEqual(expected.sort((a, b) => a - b));
  });
}

/** Every id `list` gives, page by page, with a bound on pages. */
async function scanAll(store: LedgerStore, limit: number): Promise<number[]> {
  const ids: number[] = [];
  let after: number | undefined;
  for (let page = 0; page < 1_000; page++) {
    const result = await store.list(after === undefined ? { limit } : { after, limit });
    ids.push(...result.ledgerIds);
    if (result.next === undefined) return ids;
    after = result.next;
  }
  throw new Error('the scan did not end within 1000 pages');
}

interface LimitCase {
  limit: string;
  /** A call right at the documented limit: it must succeed. */
  atLimit: (store: LedgerStore) => Promise<unknown>;
  /** The same call one step past it. */
  pastLimit: (store: LedgerStore) => Promise<unknown>;
  code: CodeName;
  reason: string;
  /** What the refused call must have left as it was. */
  unchanged: (store: LedgerStore) => Promise<unknown>;
}

const emptyLedger = (id: number) => async (store: LedgerStore) =>
  expect(await store.info(id)).toMatchObject({ lastAddConfirmed: -1, sizeBytes: 0 });

/** The README's limits at their default values, each with the code and reason it documents. */
const DOCUMENTED_LIMITS: LimitCase[] = [
  {
    limit: `maxEntryBytes ${DEFAULT_MAX_ENTRY_BYTES}`,
    atLimit: async (store) => (await store.create(80)).append([new Uint8Array(DEFAULT_MAX_ENTRY_BYTES)]),
    pastLimit: async (store) => (await store.create(81)).append([new Uint8Array(DEFAULT_MAX_ENTRY_BYTES + 1)]),
    code: 'RESOURCE_EXHAUSTED',
    reason: R.entryTooLarge,
    unchanged: emptyLedger(81),
  },
  {
    limit: `maxAppendEntries ${DEFAULT_MAX_APPEND_ENTRIES}`,
    atLimit: async (store) => (await store.create(82)).append(emptyEntries(DEFAULT_MAX_APPEND_ENTRIES)),
    pastLimit: async (store) => (await store.create(83)).append(emptyEntries(DEFAULT_MAX_APPEND_ENTRIES + 1)),
    code: 'RESOURCE_EXHAUSTED',
    reason: R.appendTooLarge,
    unchanged: emptyLedger(83),
  },
  {
    limit: `maxAppendBytes ${DEFAULT_MAX_APPEND_BYTES}`,
    atLimit: async (store) => (await store.create(84)).append(entriesOfTotal(DEFAULT_MAX_APPEND_BYTES)),
    pastLimit: async (store) => (await store.create(85)).append(entriesOfTotal(DEFAULT_MAX_APPEND_BYTES + 1)),
    code: 'RESOURCE_EXHAUSTED',
    reason: R.appendTooLarge,
    unchanged: emptyLedger(85),
  },
  {
    limit: `maxReadEntries ${DEFAULT_MAX_READ_ENTRIES}`,
    atLimit: async (store) => {
      const writer = await store.create(86);
      await writer.append(emptyEntries(DEFAULT_MAX_READ_ENTRIES));
      await writer.append(emptyEntries(1));
      return store.read(86, 1, DEFAULT_MAX_READ_ENTRIES);
    },
    pastLimit: (store) => store.read(86, 0, DEFAULT_MAX_READ_ENTRIES),
    code: 'INVALID_ARGUMENT',
    reason: R.readRangeTooLarge,
    unchanged: async (store) => expect(await store.lastAddConfirmed(86)).toBe(DEFAULT_MAX_READ_ENTRIES),
  },
  {
    limit: `list page at most ${MAX_LIST_PAGE}`,
    atLimit: (store) => store.list({ limit: MAX_LIST_PAGE }),
    pastLimit: (store) => store.list({ limit: MAX_LIST_PAGE + 1 }),
    code: 'INVALID_ARGUMENT',
    reason: R.badPageLimit,
    unchanged: async () => undefined,
  },
  {
    limit: 'list page at least 1',
    atLimit: (store) => store.list({ limit: 1 }),
    pastLimit: (store) => store.list({ limit: 0 }),
    code: 'INVALID_ARGUMENT',
    reason: R.badPageLimit,
    unchanged: async () => undefined,
  },
  {
    limit: `owner tags ${MAX_OWNER_TAGS_BYTES} bytes`,
    atLimit: (store) => store.create(87, { ownerTags: ownerTagsOfSize(MAX_OWNER_TAGS_BYTES) }),
    pastLimit: (store) => store.create(88, { ownerTags: ownerTagsOfSize(MAX_OWNER_TAGS_BYTES + 1) }),
    code: 'RESOURCE_EXHAUSTED',
    reason: R.ownerTagsTooLarge,
    unchanged: async (store) => expect(await store.info(88)).toBeUndefined(),
  },
];

export function describeDocumentedLimits({ fresh }: SuiteContext): void {
  it.each(DOCUMENTED_LIMITS.map((c) => [c.limit, c] as const))(
    'enforces the documented limit %s with its code and reason',
    async (_, limitCase) => {
      const store = await fresh();
      await limitCase.atLimit(store);
      const error = await expectFailure(limitCase.pastLimit(store), limitCase.code, limitCase.reason);
      expect(error.message).not.toBe('');
      await limitCase.unchanged(store);
    },
  );

  it(`pages ${DEFAULT_LIST_PAGE} ledgers by default`, async () => {
    const store = await fresh();
    for (let id = 0; id <= DEFAULT_LIST_PAGE; id++) await store.create(id);
    const first = await store.list();
    expect(first.ledgerIds).toHaveLength(DEFAULT_LIST_PAGE);
    expect(first.next).toBe(DEFAULT_LIST_PAGE - 1);
    expect(await store.list({ after: first.next! })).toEqual({ ledgerIds: [DEFAULT_LIST_PAGE] });
  });
}

function emptyEntries(count: number): Uint8Array[] {
  const empty = new Uint8Array(0);
  return Array.from({ length: count }, () => empty);
}

/** Entries of at most the largest entry size adding up to `totalBytes`, sharing one buffer. */
function entriesOfTotal(totalBytes: number): Uint8Array[] {
  const full = new Uint8Array(DEFAULT_MAX_ENTRY_BYTES);
  const entries: Uint8Array[] = [];
  for (let left = totalBytes; left > 0; left -= DEFAULT_MAX_ENTRY_BYTES) {
    entries.push(left >= DEFAULT_MAX_ENTRY_BYTES ? full : full.subarray(0, left));
  }
  return entries;
}

/** Owner tags whose stored JSON takes exactly `bytes` bytes. */
function ownerTagsOfSize(bytes: number): Record<string, string> {
  const overhead = JSON.stringify({ k: '' }).length;
  return { k: 'x'.repeat(bytes - overhead) };
}
