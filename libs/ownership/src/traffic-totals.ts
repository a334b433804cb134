import type { Counter } from 'prom-client';
import type { LoadTotals } from './owner-load.js';

/** An owner's traffic counters, labelled by topic (a read-only owner stores nothing, so has no `in` counters). */
export interface TrafficCounters {
  messagesIn?: Counter<'topic'>;
  bytesIn?: Counter<'topic'>;
  messagesOut: Counter<'topic'>;
  bytesOut: Counter<'topic'>;
}

async function byTopic(counter: Counter<'topic'> | undefined): Promise<Map<string, number>> {
  const values = new Map<string, number>();
  if (counter === undefined) return values;
  for (const { labels, value } of (await counter.get()).values) {
    const topic = String(labels.topic ?? '');
    values.set(topic, (values.get(topic) ?? 0) + value);
  }
  return values;
}

function sum(values: Map<string, number>): number {
  let total = 0;
  for (const value of values.values()) total += value;
  return total;
}

/**
 * The traffic part of an owner's load totals: each counter's total over
 * every topic label (it never goes down when a topic unloads), and the
 * messages in and out of each topic in `owned` (the names its leases have),
 * from which the load meter finds the busiest.
 */
export async function trafficTotals(
  counters: TrafficCounters,
  owned: readonly string[],
): Promise<Pick<LoadTotals, 'messagesIn' | 'bytesIn' | 'messagesOut' | 'bytesOut' | 'topicMessages'>> {
  const [messagesIn, messagesOut] = await Promise.all([byTopic(counters.messagesIn), byTopic(counters.messagesOut)]);
  const [bytesIn, bytesOut] = await Promise.all([byTopic(counters.bytesIn), byTopic(counters.bytesOut)]);
  const topicMessages = new Map<string, number>();
  for (const topic of owned) topicMessages.set(topic, (messagesIn.get(topic) ?? 0) + (messagesOut.get(topic) ?? 0));
  return {
    messagesIn: sum(messagesIn),
    bytesIn: sum(bytesIn),
    messagesOut: sum(messagesOut),
    bytesOut: sum(bytesOut),
    topicMessages,
  };
}
