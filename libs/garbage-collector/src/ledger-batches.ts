import type { LedgerInfo, LedgerStore } from '@ledgerline/ledger-store';

/*
 * The ledger store's batch forms, or the single calls where a store has none
 * (a wrapper, a test store): either way one settled result per ledger, in
 * order. The caller bounds the batch; the single calls of one batch run at once.
 */

export function infoEach(
  store: LedgerStore,
  ledgerIds: readonly number[],
): Promise<PromiseSettledResult<LedgerInfo | undefined>[]> {
  const { infoMany } = store;
  if (infoMany === undefined) return Promise.allSettled(ledgerIds.map(async (id) => store.info(id)));
  return perLedger(ledgerIds, () => infoMany.call(store, ledgerIds));
}

export function deleteEach(store: LedgerStore, ledgerIds: readonly number[]): Promise<PromiseSettledResult<void>[]> {
  const { deleteMany } = store;
  if (deleteMany === undefined) return Promise.allSettled(ledgerIds.map(async (id) => store.delete(id)));
  return perLedger(ledgerIds, () => deleteMany.call(store, ledgerIds));
}

/** A batch call that fails as a whole fails each of its ledgers: nothing it may have done counts as done. */
async function perLedger<T>(
  ledgerIds: readonly number[],
  call: () => Promise<PromiseSettledResult<T>[]>,
): Promise<PromiseSettledResult<T>[]> {
  let results: PromiseSettledResult<T>[];
  try {
    results = await call();
  } catch (reason) {
    return ledgerIds.map(() => ({ status: 'rejected', reason }));
  }
  // One result per ledger is the batch contract; a store that breaks it has a bug, and guessing would risk a leak.
  if (results.length !== ledgerIds.length) {
    throw new Error(`the ledger store answered a batch of ${ledgerIds.length} ledgers with ${results.length} results`);
  }
  return results;
}
