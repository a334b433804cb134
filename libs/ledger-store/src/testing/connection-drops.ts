import { LedgerlineError } from '@ledgerline/errors';
import { ConnectionDropper, uniqueNamespace } from '@ledgerline/testing';
import { LedgerStoreReason as R } from '../errors.js';
import { checkFencingHistory, readAll, runFencingWorkload, type FencingHistory } from './fencing-history.js';
import type { RedisLedgerStore } from '../redis-store.js';
import { DEFAULT_MAX_READ_ENTRIES } from '../store.js';

/*
 * The fencing workload while every connection is dropped again and again
 * (by the shared ConnectionDropper), checked against the fencing model.
 */

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Retries a call while it fails UNAVAILABLE (a connection is being re-opened), a bounded number of times. */
export async function retryWhileUnavailable<T>(call: () => Promise<T>, attempts = 100): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (thrown) {
      if (attempt >= attempts || !LedgerlineError.is(thrown, R.storeUnavailable)) throw thrown;
      await pause(20);
    }
  }
}

export interface DropScenarioResult {
  histories: FencingHistory[];
  problems: string[];
  /** Calls that failed UNAVAILABLE yet whose entries were stored: drops that cost a reply, not the write. */
  ambiguousStored: number;
}

/**
 * Runs the fencing workload `rounds` times on fresh ledgers while the
 * dropper closes every connection, and checks each history against the model.
 */
export async function fencingUnderConnectionDrops(
  open: (keyPrefix: string) => RedisLedgerStore,
  nodeUrls: readonly string[],
  rounds: number,
): Promise<DropScenarioResult> {
  const histories: FencingHistory[] = [];
  const problems: string[] = [];
  let ambiguousStored = 0;
  for (let round = 0; round < rounds; round++) {
    const keyPrefix = `${uniqueNamespace('drops')}:`;
    const writerStore = open(keyPrefix);
    const fencer = open(keyPrefix);
    const dropper = new ConnectionDropper(nodeUrls);
    try {
      const ledgerId = 1_000 + round;
      const writer = await retryWhileUnavailable(() => writerStore.create(ledgerId));
      const drops = dropper.run(12, 40);
      const history = await runFencingWorkload({
        writer,
        fencer,
        ledgerId,
        chains: 6,
        maxCallsPerChain: 5_000,
        fenceWhen: () => dropper.after(8),
      });
      await drops;
      const finalLac = await retryWhileUnavailable(() => fencer.lastAddConfirmed(ledgerId));
      const stored = await retryWhileUnavailable(() => readAll(fencer, ledgerId, finalLac, DEFAULT_MAX_READ_ENTRIES));
      histories.push(history);
      const checked = checkFencingHistory(history, finalLac, stored);
      problems.push(...checked.problems.map((p) => `round ${round}: ${p}`));
      ambiguousStored += checked.ambiguousStored;
    } finally {
      dropper.close();
      await writerStore.close();
      await fencer.close();
    }
  }
  return { histories, problems, ambiguousStored };
}

/** The scenario's verdict: the model held, and the drops really did hit appends on both sides of the fence. */
export function expectFencingModelHeld(result: DropScenarioResult): void {
  expect(result.problems).toEqual([]);
  const records = result.histories.flatMap((h) => h.records);
  expect(records.some((r) => !r.outcome.ok && r.outcome.code === 'UNAVAILABLE')).toBe(true);
  expect(records.some((r) => r.issuedAfterFence)).toBe(true);
  expect(records.filter((r) => r.outcome.ok).length).toBeGreaterThan(10);
}
