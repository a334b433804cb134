import { trafficTotals, type LoadTotals } from '@ledgerline/ownership';
import type { LoadedTopicsOwner } from './owner-view.js';

/** What the writer owner's load is measured from: its traffic counters and the topics it holds now. */
export async function writerLoadTotals(owner: LoadedTopicsOwner): Promise<LoadTotals> {
  const topics = owner.registry.all();
  return {
    ...(await trafficTotals(
      owner.metrics,
      topics.map((topic) => topic.name),
    )),
    topicsOwned: topics.length,
    pendingEntries: topics.reduce((sum, topic) => sum + topic.pendingEntries, 0),
  };
}
