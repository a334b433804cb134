import { trafficTotals, type LoadTotals } from '@ledgerline/ownership';
import type { LoadedTopicsOwner } from './owner-view.js';

/**
 * What the writer owner's load is measured from: its traffic counters and the
 * topics it holds now, with the bytes their ledgers hold. Each topic's bytes
 * are a running figure of its managed ledger (O(1) between ledger switches
 * and trims), so the sum stays cheap at thousands of topics per interval.
 */
export async function writerLoadTotals(owner: LoadedTopicsOwner): Promise<LoadTotals> {
  const topics = owner.registry.all();
  let pendingEntries = 0;
  let storageBytes = 0;
  for (const topic of topics) {
    pendingEntries += topic.pendingEntries;
    storageBytes += topic.ledger.storedBytes();
  }
  return {
    ...(await trafficTotals(
      owner.metrics,
      topics.map((topic) => topic.name),
    )),
    topicsOwned: topics.length,
    pendingEntries,
    storageBytes,
  };
}
