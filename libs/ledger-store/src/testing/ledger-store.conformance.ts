import { eventually } from '@ledgerline/testing';
import fc from 'fast-check';
import { LedgerlineError, ErrorReason } from '@ledgerline/errors';
import {
  allByteValues,
  bytesOf,
  expectFailure,
  namespaceFactory,
  taggedEntry,
  type ConformanceBackend,
  type SuiteContext,
} from './conformance-support.js';
import { describeBatches } from './ledger-store-batches.conformance.js';
import { describeDocumentedLimits, describeEdgeCases } from './ledger-store-edges.conformance.js';
import { LedgerStoreReason } from '../errors.js';
import {
  DEFAULT_MAX_ENTRY_BYTES,
  MAX_LIST_PAGE,
  OwnerTag,
  type LedgerStore,
  type LedgerStoreOptions,
} from '../store.js';

export type { ConformanceBackend } from './conformance-support.js';

/**
 * The one suite every LedgerStore backend must pass. Each spec file calls it
 * with its backend; stores opened by a test are closed after it.
 */
export function describeLedgerStoreConformance(backend: ConformanceBackend): void {
  describe(`LedgerStore conformance: ${backend.name}`, () => {
    const opened: LedgerStore[] = [];
    const namespace = namespaceFactory(backend.name);
    const open = async (ns: string, options?: LedgerStoreOptions): Promise<LedgerStore> => {
      const store = await backend.open(ns, options);
      opened.push(store);
      return store;
    };
    const context: SuiteContext = {
      fresh: (options) => open(namespace(), options),
      pair: async () => {
        const ns = namespace();
        return [await open(ns), await open(ns)];
      },
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    });

    describeLifecycle(context);
    describeMissingAndClosed(context);
    describeAppendOrdering(context);
    describeFencing(context);
    describeFenceThenClose(context);
    describeDeleteAndList(context);
    describeBatches(context);
    describeBadInput(context);
    describeLimits(context);
    describeBinaryFidelity(context);
    describeEdgeCases(context);
    describeDocumentedLimits(context);
  });
}

function describeLifecycle({ fresh, pair }: SuiteContext): void {
  it('creates, appends, reads, reports info and closes a ledger', async () => {
    const store = await fresh();
    const before = Date.now();
    const ownerTags = { [OwnerTag.topic]: 'persistent://t/ns/a', [OwnerTag.component]: 'managed-ledger' };
    const writer = await store.create(7, { ownerTags });
    expect(writer.ledgerId).toBe(7);
    expect(await store.lastAddConfirmed(7)).toBe(-1);
    expect(await writer.append([taggedEntry(0, 0), taggedEntry(0, 1)])).toBe(0);
    expect(await writer.append([taggedEntry(1, 0, 100)])).toBe(2);
    expect(await store.lastAddConfirmed(7)).toBe(2);

    const entries = await store.read(7, 0, 2);
    expect(entries.map((e) => e.entryId)).toEqual([0, 1, 2]);
    expect(entries.map((e) => bytesOf(e.data))).toEqual(
      [taggedEntry(0, 0), taggedEntry(0, 1), taggedEntry(1, 0, 100)].map(bytesOf),
    );
    expect((await store.read(7, 1, 1)).map((e) => e.entryId)).toEqual([1]);

    const info = await store.info(7);
    expect(info).toMatchObject({ ledgerId: 7, state: 'open', lastAddConfirmed: 2, sizeBytes: 132, ownerTags });
    expect(info!.createdAtMs).toBeGreaterThanOrEqual(before);
    expect(info!.createdAtMs).toBeLessThanOrEqual(Date.now());

    expect(await writer.close()).toBe(2);
    expect((await store.info(7))?.state).toBe('closed');
    expect(await writer.close()).toBe(2);
    await expectFailure(writer.append([taggedEntry(2, 0)]), 'FAILED_PRECONDITION', LedgerStoreReason.LEDGER_CLOSED);
    expect(await store.fence(7)).toBe(2);
    expect(await store.closeLedger(7)).toBe(2);
    expect((await store.read(7, 0, 2)).length).toBe(3);
  });

  it('closes an empty ledger at -1 and stores an empty owner tag set', async () => {
    const store = await fresh();
    const writer = await store.create(1);
    expect(await writer.close()).toBe(-1);
    expect(await store.info(1)).toMatchObject({ state: 'closed', lastAddConfirmed: -1, sizeBytes: 0, ownerTags: {} });
  });

  it('lets only one of two owners create a ledger id; the winner keeps writing', async () => {
    const [a, b] = await pair();
    const outcomes = await Promise.allSettled([a.create(5), b.create(5)]);
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    const lost = outcomes.filter((o) => o.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    const error = (lost[0] as PromiseRejectedResult).reason as LedgerlineError;
    expect(`${error.code} ${error.reason}`).toBe(`ALREADY_EXISTS ${LedgerStoreReason.LEDGER_EXISTS}`);
    await expectFailure(a.create(5), 'ALREADY_EXISTS', LedgerStoreReason.LEDGER_EXISTS);
    const writer = (won[0] as PromiseFulfilledResult<Awaited<ReturnType<LedgerStore['create']>>>).value;
    expect(await writer.append([taggedEntry(0, 0)])).toBe(0);
  });
}

function describeMissingAndClosed({ fresh }: SuiteContext): void {
  it('answers NOT_FOUND for every call on a missing ledger except info and delete', async () => {
    const store = await fresh();
    await expectFailure(store.fence(9), 'NOT_FOUND', LedgerStoreReason.LEDGER_NOT_FOUND);
    await expectFailure(store.closeLedger(9), 'NOT_FOUND', LedgerStoreReason.LEDGER_NOT_FOUND);
    await expectFailure(store.read(9, 0, 0), 'NOT_FOUND', LedgerStoreReason.LEDGER_NOT_FOUND);
    await expectFailure(store.lastAddConfirmed(9), 'NOT_FOUND', LedgerStoreReason.LEDGER_NOT_FOUND);
    expect(await store.info(9)).toBeUndefined();
    await store.delete(9);
  });

  it('calls the LAC hook after each acknowledged append, and a throwing hook fails nothing', async () => {
    const seen: [number, number][] = [];
    const store = await fresh({ onLacAdvanced: (id, lac) => seen.push([id, lac]) });
    const writer = await store.create(3);
    await writer.append([taggedEntry(0, 0), taggedEntry(0, 1)]);
    await writer.append([taggedEntry(1, 0)]);
    expect(seen).toEqual([
      [3, 1],
      [3, 2],
    ]);
    const throwing = await fresh({
      onLacAdvanced: () => {
        throw new Error('the bus is down');
      },
    });
    expect(await (await throwing.create(3)).append([taggedEntry(0, 0)])).toBe(0);
  });

  it('refuses calls once the store is closed', async () => {
    const store = await fresh();
    const writer = await store.create(1);
    await store.close();
    await store.close();
    await expectFailure(writer.append([taggedEntry(0, 0)]), 'FAILED_PRECONDITION', ErrorReason.STORE_CLOSED);
    await expectFailure(store.info(1), 'FAILED_PRECONDITION', ErrorReason.STORE_CLOSED);
  });
}

function describeAppendOrdering({ fresh }: SuiteContext): void {
  it('gives 100 concurrent appends dense ids from 0 in call order, each batch contiguous', async () => {
    const store = await fresh();
    const writer = await store.create(11);
    const sizes = Array.from({ length: 100 }, (_, call) => 1 + (call % 5));
    const firstIds = await Promise.all(
      sizes.map((size, call) => writer.append(Array.from({ length: size }, (_, i) => taggedEntry(call, i)))),
    );
    let expectedFirst = 0;
    firstIds.forEach((first, call) => {
      expect(first).toBe(expectedFirst);
      expectedFirst += sizes[call]!;
    });
    const total = expectedFirst;
    expect(await store.lastAddConfirmed(11)).toBe(total - 1);
    const entries = await store.read(11, 0, total - 1);
    expect(entries.map((e) => e.entryId)).toEqual(Array.from({ length: total }, (_, i) => i));
    const expected = sizes.flatMap((size, call) =>
      Array.from({ length: size }, (_, i) => bytesOf(taggedEntry(call, i))),
    );
    expect(entries.map((e) => bytesOf(e.data))).toEqual(expected);
    expect((await store.info(11))?.sizeBytes).toBe(total * 16);
  });

  it('answers each of the appends several ledgers make in one turn alone: a fenced one fails, the others land', async () => {
    const store = await fresh();
    const writers = await Promise.all([21, 22, 23].map((id) => store.create(id)));
    await store.fence(22);
    // Issued in one turn, so a store that sends a turn's appends together (one pipeline, one transaction) gets them at once.
    const outcomes = await Promise.allSettled(
      writers.map((writer, call) => writer.append([taggedEntry(call, 0), taggedEntry(call, 1)])),
    );
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    await expectFailure(
      Promise.reject((outcomes[1] as PromiseRejectedResult).reason),
      'ABORTED',
      LedgerStoreReason.LEDGER_FENCED,
    );
    expect(await store.lastAddConfirmed(21)).toBe(1);
    expect(await store.lastAddConfirmed(22)).toBe(-1);
    expect((await store.read(23, 0, 1)).map((e) => bytesOf(e.data))).toEqual(
      [0, 1].map((i) => bytesOf(taggedEntry(2, i))),
    );
    // A failed append takes nothing from the next turn's: the same writers go on.
    expect(await writers[0]!.append([taggedEntry(0, 2)])).toBe(2);
    expect(await writers[2]!.append([taggedEntry(2, 2)])).toBe(2);
  });

  it('shows a call every write called before it on the store, answered or not', async () => {
    const store = await fresh();
    const writer = await store.create(24);
    // None awaited before the read after it: a caller may go on without the answer (a ledger deleted in passing),
    // and what it calls next must find the write done, however the store gathers its writes.
    const appended = writer.append([taggedEntry(0, 0), taggedEntry(0, 1)]);
    expect(await store.lastAddConfirmed(24)).toBe(1);
    expect((await store.read(24, 0, 1)).map((e) => bytesOf(e.data))).toEqual(
      [0, 1].map((i) => bytesOf(taggedEntry(0, i))),
    );
    expect(await appended).toBe(0);
    const fenced = store.fence(24);
    expect((await store.info(24))?.state).toBe('fenced');
    expect(await fenced).toBe(1);
    const deleted = store.delete(24);
    expect(await store.info(24)).toBeUndefined();
    await deleted;
  });

  it('keeps reads equal to a model of the appends (property)', async () => {
    const store = await fresh();
    let ledgerId = 100;
    const batch = fc.array(fc.uint8Array({ minLength: 0, maxLength: 64 }), { minLength: 1, maxLength: 8 });
    await fc.assert(
      fc.asyncProperty(fc.array(batch, { minLength: 1, maxLength: 6 }), fc.nat(), fc.nat(), async (batches, x, y) => {
        const id = ledgerId++;
        const writer = await store.create(id);
        const model: number[][] = [];
        for (const entries of batches) {
          expect(await writer.append(entries)).toBe(model.length);
          model.push(...entries.map(bytesOf));
        }
        const first = x % model.length;
        const last = first + (y % (model.length - first));
        const read = await store.read(id, first, last);
        expect(read.map((e) => bytesOf(e.data))).toEqual(model.slice(first, last + 1));
        expect(read.map((e) => e.entryId)).toEqual(model.slice(first, last + 1).map((_, i) => first + i));
      }),
      { numRuns: 15 },
    );
  });
}

function describeFencing({ pair }: SuiteContext): void {
  it('fences a writer that appends in a loop: nothing acknowledged is lost and nothing after the fence lands', async () => {
    const [writerStore, recoveryStore] = await pair();
    const writer = await writerStore.create(21);
    const acknowledged = new Map<number, Uint8Array>();
    let fenceReturned = false;
    const lateSuccesses: number[] = [];
    const chain = async (chainId: number): Promise<LedgerlineError> => {
      for (let i = 0; i < 2_000; i++) {
        const entries = [taggedEntry(chainId, i * 2), taggedEntry(chainId, i * 2 + 1)];
        // A synchronous backend never yields on its own; the owners must interleave as they would in production.
        await new Promise((resolve) => setImmediate(resolve));
        const issuedAfterFence = fenceReturned;
        try {
          const first = await writer.append(entries);
          if (issuedAfterFence) lateSuccesses.push(first);
          entries.forEach((entry, k) => acknowledged.set(first + k, entry));
        } catch (thrown) {
          return thrown as LedgerlineError;
        }
      }
      throw new Error(`chain ${chainId} was never fenced`);
    };
    const chains = [0, 1, 2, 3].map(chain);
    await eventually(async () => (await recoveryStore.lastAddConfirmed(21)) >= 40);
    const fencedLac = await recoveryStore.fence(21);
    fenceReturned = true;

    for (const error of await Promise.all(chains)) {
      expect(`${error.code} ${error.reason}`).toBe(`ABORTED ${LedgerStoreReason.LEDGER_FENCED}`);
    }
    expect(lateSuccesses).toEqual([]);
    await expectFailure(writer.append([taggedEntry(9, 0)]), 'ABORTED', LedgerStoreReason.LEDGER_FENCED);
    expect(Math.max(...acknowledged.keys())).toBe(fencedLac);
    expect([...acknowledged.keys()].sort((p, q) => p - q)).toEqual(Array.from({ length: fencedLac + 1 }, (_, i) => i));
    const stored = await recoveryStore.read(21, 0, fencedLac);
    expect(stored.map((e) => bytesOf(e.data))).toEqual(stored.map((e) => bytesOf(acknowledged.get(e.entryId)!)));
    expect((await recoveryStore.info(21))?.state).toBe('fenced');
    expect(await recoveryStore.fence(21)).toBe(fencedLac);
  });
}

function describeFenceThenClose({ pair }: SuiteContext): void {
  it('keeps the old writer fenced after the recovering owner closes the ledger', async () => {
    const [writerStore, recoveryStore] = await pair();
    const writer = await writerStore.create(22);
    await writer.append([taggedEntry(0, 0), taggedEntry(0, 1)]);
    expect(await recoveryStore.fence(22)).toBe(1);
    expect(await recoveryStore.closeLedger(22)).toBe(1);
    expect(await recoveryStore.closeLedger(22)).toBe(1);
    await expectFailure(writer.append([taggedEntry(1, 0)]), 'ABORTED', LedgerStoreReason.LEDGER_FENCED);
    await expectFailure(writer.close(), 'ABORTED', LedgerStoreReason.LEDGER_FENCED);
    expect(await recoveryStore.info(22)).toMatchObject({ state: 'closed', lastAddConfirmed: 1 });
    expect((await writerStore.read(22, 0, 1)).length).toBe(2);
  });

  it('treats closing an open ledger from outside its writer as a fence', async () => {
    const [writerStore, recoveryStore] = await pair();
    const writer = await writerStore.create(23);
    await writer.append([taggedEntry(0, 0)]);
    expect(await recoveryStore.closeLedger(23)).toBe(0);
    await expectFailure(writer.append([taggedEntry(1, 0)]), 'ABORTED', LedgerStoreReason.LEDGER_FENCED);
    await expectFailure(writer.close(), 'ABORTED', LedgerStoreReason.LEDGER_FENCED);
  });

  it('lets exactly one of a writer close and a fence decide the end of the ledger', async () => {
    const [writerStore, recoveryStore] = await pair();
    const writer = await writerStore.create(24);
    await writer.append([taggedEntry(0, 0)]);
    const [closed, fenced] = await Promise.allSettled([writer.close(), recoveryStore.fence(24)]);
    expect(fenced).toEqual({ status: 'fulfilled', value: 0 });
    if (closed.status === 'fulfilled') {
      expect(closed.value).toBe(0);
      expect((await recoveryStore.info(24))?.state).toBe('closed');
    } else {
      expect((closed.reason as LedgerlineError).reason).toBe(LedgerStoreReason.LEDGER_FENCED);
      expect((await recoveryStore.info(24))?.state).toBe('fenced');
    }
  });
}

function describeDeleteAndList({ fresh }: SuiteContext): void {
  it('deletes idempotently and forgets every entry', async () => {
    const store = await fresh();
    const writer = await store.create(31);
    await writer.append([taggedEntry(0, 0), taggedEntry(0, 1)]);
    await store.delete(31);
    expect(await store.info(31)).toBeUndefined();
    await expectFailure(store.read(31, 0, 1), 'NOT_FOUND', LedgerStoreReason.LEDGER_NOT_FOUND);
    await expectFailure(writer.append([taggedEntry(1, 0)]), 'NOT_FOUND', LedgerStoreReason.LEDGER_NOT_FOUND);
    await expectFailure(writer.close(), 'NOT_FOUND', LedgerStoreReason.LEDGER_NOT_FOUND);
    await store.delete(31);
    await store.delete(32);
    expect((await store.list()).ledgerIds).toEqual([]);
  });

  it('pages through every ledger in ascending id order', async () => {
    const store = await fresh();
    const ids = Array.from({ length: 23 }, (_, i) => (i * 37) % 101);
    for (const id of ids) await store.create(id);
    const sorted = [...ids].sort((a, b) => a - b);
    const seen: number[] = [];
    let after: number | undefined;
    for (let page = 0; page < 20; page++) {
      const result = await store.list(after === undefined ? { limit: 4 } : { after, limit: 4 });
      seen.push(...result.ledgerIds);
      expect(result.ledgerIds.length).toBeLessThanOrEqual(4);
      if (result.next === undefined) break;
      after = result.next;
    }
    expect(seen).toEqual(sorted);
    expect((await store.list()).ledgerIds).toEqual(sorted);
    expect((await store.list({ after: sorted[20]! })).ledgerIds).toEqual(sorted.slice(21));
    expect(await store.list({ limit: 23 })).toEqual({ ledgerIds: sorted });
    await store.delete(sorted[0]!);
    expect((await store.list({ limit: 1 })).ledgerIds).toEqual([sorted[1]]);
  });
}

function describeBadInput({ fresh }: SuiteContext): void {
  const badIds: unknown[] = [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '1', null, undefined, 1n];

  it('rejects bad ledger ids on every call with INVALID_ARGUMENT', async () => {
    const store = await fresh();
    for (const bad of badIds) {
      const id = bad as number;
      await expectFailure(store.create(id), 'INVALID_ARGUMENT', LedgerStoreReason.BAD_LEDGER_ID);
      await expectFailure(store.fence(id), 'INVALID_ARGUMENT', LedgerStoreReason.BAD_LEDGER_ID);
      await expectFailure(store.closeLedger(id), 'INVALID_ARGUMENT', LedgerStoreReason.BAD_LEDGER_ID);
      await expectFailure(store.read(id, 0, 0), 'INVALID_ARGUMENT', LedgerStoreReason.BAD_LEDGER_ID);
      await expectFailure(store.lastAddConfirmed(id), 'INVALID_ARGUMENT', LedgerStoreReason.BAD_LEDGER_ID);
      await expectFailure(store.info(id), 'INVALID_ARGUMENT', LedgerStoreReason.BAD_LEDGER_ID);
      await expectFailure(store.delete(id), 'INVALID_ARGUMENT', LedgerStoreReason.BAD_LEDGER_ID);
    }
    await expectFailure(store.list({ after: -1 }), 'INVALID_ARGUMENT', LedgerStoreReason.BAD_LEDGER_ID);
  });

  it('rejects bad entry ids and ranges, and reads past the LAC', async () => {
    const store = await fresh();
    const writer = await store.create(41);
    await writer.append([taggedEntry(0, 0), taggedEntry(0, 1)]);
    for (const bad of [-1, 0.5, Number.NaN, 2 ** 53, '0']) {
      await expectFailure(store.read(41, bad as number, 1), 'INVALID_ARGUMENT', LedgerStoreReason.BAD_ENTRY_ID);
      await expectFailure(store.read(41, 0, bad as number), 'INVALID_ARGUMENT', LedgerStoreReason.BAD_ENTRY_ID);
    }
    await expectFailure(store.read(41, 1, 0), 'INVALID_ARGUMENT', LedgerStoreReason.BAD_ENTRY_RANGE);
    await expectFailure(store.read(41, 0, 2), 'OUT_OF_RANGE', LedgerStoreReason.ENTRY_NOT_CONFIRMED);
    await expectFailure(store.read(41, 5, 9), 'OUT_OF_RANGE', LedgerStoreReason.ENTRY_NOT_CONFIRMED);
    const empty = await store.create(42);
    await expectFailure(store.read(42, 0, 0), 'OUT_OF_RANGE', LedgerStoreReason.ENTRY_NOT_CONFIRMED);
    expect(empty.ledgerId).toBe(42);
  });

  it('rejects bad appends, owner tags and page limits without storing anything', async () => {
    const store = await fresh();
    const writer = await store.create(43);
    await expectFailure(writer.append([]), 'INVALID_ARGUMENT', LedgerStoreReason.EMPTY_APPEND);
    await expectFailure(writer.append('x' as unknown as Uint8Array[]), 'INVALID_ARGUMENT', LedgerStoreReason.BAD_ENTRY);
    await expectFailure(
      writer.append([taggedEntry(0, 0), 'x' as unknown as Uint8Array]),
      'INVALID_ARGUMENT',
      LedgerStoreReason.BAD_ENTRY,
    );
    expect(await store.lastAddConfirmed(43)).toBe(-1);
    await expectFailure(
      store.create(44, { ownerTags: { a: 1 as unknown as string } }),
      'INVALID_ARGUMENT',
      LedgerStoreReason.BAD_OWNER_TAGS,
    );
    await expectFailure(
      store.create(44, { ownerTags: [] as unknown as Record<string, string> }),
      'INVALID_ARGUMENT',
      LedgerStoreReason.BAD_OWNER_TAGS,
    );
    const huge = { [OwnerTag.topic]: 'x'.repeat(5_000) };
    await expectFailure(
      store.create(44, { ownerTags: huge }),
      'RESOURCE_EXHAUSTED',
      LedgerStoreReason.OWNER_TAGS_TOO_LARGE,
    );
    expect(await store.info(44)).toBeUndefined();
    for (const limit of [0, -1, 1.5, MAX_LIST_PAGE + 1]) {
      await expectFailure(store.list({ limit }), 'INVALID_ARGUMENT', LedgerStoreReason.BAD_PAGE_LIMIT);
    }
  });
}

function describeLimits({ fresh }: SuiteContext): void {
  it('enforces entry, append and read limits', async () => {
    const limits = { maxEntryBytes: 32, maxAppendEntries: 4, maxAppendBytes: 100, maxReadEntries: 3 };
    const store = await fresh({ limits });
    const writer = await store.create(51);
    await expectFailure(writer.append([new Uint8Array(33)]), 'RESOURCE_EXHAUSTED', LedgerStoreReason.ENTRY_TOO_LARGE);
    await expectFailure(
      writer.append(Array.from({ length: 5 }, () => new Uint8Array(1))),
      'RESOURCE_EXHAUSTED',
      LedgerStoreReason.APPEND_TOO_LARGE,
    );
    await expectFailure(
      writer.append(Array.from({ length: 4 }, () => new Uint8Array(30))),
      'RESOURCE_EXHAUSTED',
      LedgerStoreReason.APPEND_TOO_LARGE,
    );
    expect(await store.lastAddConfirmed(51)).toBe(-1);
    expect(await writer.append([new Uint8Array(32), new Uint8Array(32), new Uint8Array(32), new Uint8Array(4)])).toBe(
      0,
    );
    await expectFailure(store.read(51, 0, 3), 'INVALID_ARGUMENT', LedgerStoreReason.READ_RANGE_TOO_LARGE);
    expect((await store.read(51, 1, 3)).length).toBe(3);
  });

  it('rejects an entry above the default maximum size', async () => {
    const store = await fresh();
    const writer = await store.create(52);
    await expectFailure(
      writer.append([new Uint8Array(DEFAULT_MAX_ENTRY_BYTES + 1)]),
      'RESOURCE_EXHAUSTED',
      LedgerStoreReason.ENTRY_TOO_LARGE,
    );
    expect(await store.lastAddConfirmed(52)).toBe(-1);
  });
}

function describeBinaryFidelity({ fresh }: SuiteContext): void {
  it('returns every byte value, empty entries and large entries exactly as written', async () => {
    const store = await fresh();
    const writer = await store.create(61);
    const large = Uint8Array.from({ length: 256 * 1024 }, (_, i) => (i * 2654435761) >>> 24);
    const offset = new Uint8Array(300).subarray(44, 300);
    offset.set(allByteValues());
    const written = [allByteValues(), new Uint8Array(0), new Uint8Array(64), large, offset, Uint8Array.of(0)];
    expect(await writer.append(written)).toBe(0);
    const read = await store.read(61, 0, written.length - 1);
    // Hex strings keep the comparison of a 256 KiB entry fast and its diff readable.
    expect(read.map((e) => Buffer.from(e.data).toString('hex'))).toEqual(
      written.map((e) => Buffer.from(e).toString('hex')),
    );
    for (const entry of read) expect(entry.data).toBeInstanceOf(Uint8Array);
    expect((await store.info(61))?.sizeBytes).toBe(written.reduce((sum, e) => sum + e.byteLength, 0));
  });
}
