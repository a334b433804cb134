import { ErrorReason } from '@ledgerline/errors';
import { expectFailure, taggedEntry, type SuiteContext } from './conformance-support.js';
import { LedgerStoreReason } from '../errors.js';
import { MAX_BATCH_LEDGERS, OwnerTag, type LedgerStore } from '../store.js';

/*
 * The batch forms (infoMany, deleteMany): each result must be what the single
 * call would have answered for that ledger, in order, with the same checks.
 */

function batches(store: LedgerStore): Required<Pick<LedgerStore, 'infoMany' | 'deleteMany'>> {
  const { infoMany, deleteMany } = store;
  if (infoMany === undefined || deleteMany === undefined) throw new Error('this backend has no batch forms');
  return { infoMany: infoMany.bind(store), deleteMany: deleteMany.bind(store) };
}

function values<T>(results: PromiseSettledResult<T>[]): T[] {
  return results.map((result) => {
    if (result.status === 'rejected') throw result.reason;
    return result.value;
  });
}

export function describeBatches({ fresh }: SuiteContext): void {
  it('answers infoMany for each ledger, in order, as info does (missing ones undefined)', async () => {
    const store = await fresh();
    const tags = { [OwnerTag.managedLedger]: '/managed-ledgers/t/n/persistent/x', [OwnerTag.component]: 'x' };
    const writer = await store.create(7, { ownerTags: tags });
    await writer.append([taggedEntry(0, 0), taggedEntry(0, 1)]);
    await store.create(3);
    const ids = [7, 5, 3, 7];
    const answered = values(await batches(store).infoMany(ids));
    expect(answered).toEqual(await Promise.all(ids.map((id) => store.info(id))));
    expect(answered[0]).toMatchObject({ ledgerId: 7, lastAddConfirmed: 1, ownerTags: tags });
    expect(answered[1]).toBeUndefined();
    expect(await batches(store).infoMany([])).toEqual([]);
  });

  it('deletes every ledger of a deleteMany, idempotently, and lists none of them after', async () => {
    const store = await fresh();
    for (const id of [1, 2, 3, 4]) await (await store.create(id)).append([taggedEntry(id, 0)]);
    const { deleteMany } = batches(store);
    expect(values(await deleteMany([4, 2, 9]))).toEqual([undefined, undefined, undefined]);
    expect(await store.info(2)).toBeUndefined();
    expect(await store.info(4)).toBeUndefined();
    await expectFailure(store.read(2, 0, 0), 'NOT_FOUND', LedgerStoreReason.LEDGER_NOT_FOUND);
    expect((await store.list()).ledgerIds).toEqual([1, 3]);
    expect((await store.read(3, 0, 0))[0]!.data).toEqual(taggedEntry(3, 0));
    expect(values(await deleteMany([2, 4]))).toHaveLength(2);
    expect(await deleteMany([])).toEqual([]);
    expect((await store.list()).ledgerIds).toEqual([1, 3]);
  });

  it(`refuses batches of bad ids or of more than ${MAX_BATCH_LEDGERS} ledgers, touching nothing`, async () => {
    const store = await fresh();
    await store.create(1);
    const { infoMany, deleteMany } = batches(store);
    for (const call of [infoMany, deleteMany]) {
      await expectFailure(call([1, -1]), 'INVALID_ARGUMENT', LedgerStoreReason.BAD_LEDGER_ID);
      await expectFailure(call('1' as unknown as number[]), 'INVALID_ARGUMENT', LedgerStoreReason.BAD_LEDGER_ID);
      const tooMany = Array.from({ length: MAX_BATCH_LEDGERS + 1 }, (_, i) => i);
      await expectFailure(call(tooMany), 'INVALID_ARGUMENT', LedgerStoreReason.BATCH_TOO_LARGE);
    }
    expect((await store.list()).ledgerIds).toEqual([1]);
    const full = Array.from({ length: MAX_BATCH_LEDGERS }, (_, i) => i + 1);
    expect(await deleteMany(full)).toHaveLength(MAX_BATCH_LEDGERS);
    expect((await store.list()).ledgerIds).toEqual([]);
  });

  it('refuses batches once the store is closed', async () => {
    const store = await fresh();
    const { infoMany, deleteMany } = batches(store);
    await store.close();
    for (const call of [infoMany, deleteMany]) {
      await expectFailure(call([1]), 'FAILED_PRECONDITION', ErrorReason.STORE_CLOSED);
    }
  });
}
