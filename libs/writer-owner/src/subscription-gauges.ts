import { RESERVED_SUBSCRIPTION_PREFIX } from '@ledgerline/ownership';
import type { GaugedOwner } from './owner-view.js';

interface SubscriptionRow {
  labels: { topic: string; subscription: string };
  backlog: number;
  unacked: number;
  ackHoles: number;
  cursorStateBytes: number;
}

/**
 * Sets the per-subscription gauges from the topics loaded now, for a scrape.
 * Series of subscriptions and topics that went away are dropped: the gauges
 * are reset and set in one step once every value is known, so a scrape never
 * sees half of them.
 */
export async function refreshSubscriptionGauges(owner: GaugedOwner): Promise<void> {
  const rows: SubscriptionRow[] = [];
  for (const topic of owner.registry.all()) {
    if (topic.unloaded) continue;
    for (const cursor of topic.ledger.getCursors()) {
      if (cursor.name.startsWith(RESERVED_SUBSCRIPTION_PREFIX)) continue;
      const stats = cursor.stats();
      const backlog = await cursor.backlog().catch(() => stats.backlogEntries);
      const live = await owner.subscriptionStats(topic, cursor.name).catch(() => undefined);
      rows.push({
        labels: { topic: topic.name, subscription: cursor.name },
        backlog,
        unacked: live?.unackedMessages ?? 0,
        ackHoles: stats.ackedRanges,
        cursorStateBytes: stats.lastSnapshot?.bytes ?? 0,
      });
    }
  }
  const { backlog, unacked, ackHoles, cursorStateBytes } = owner.metrics;
  for (const gauge of [backlog, unacked, ackHoles, cursorStateBytes]) gauge.reset();
  for (const row of rows) {
    backlog.set(row.labels, row.backlog);
    unacked.set(row.labels, row.unacked);
    ackHoles.set(row.labels, row.ackHoles);
    cursorStateBytes.set(row.labels, row.cursorStateBytes);
  }
}
