import type { LoadTotals } from '@ledgerline/ownership';
import type { Counter } from 'prom-client';
import type { WriterOwner } from './writer-owner.js';

/** A counter's total over every label (topics): it never goes down when a topic unloads. */
async function total(counter: Counter<'topic'>): Promise<number> {
  return (await counter.get()).values.reduce((sum, value) => sum + value.value, 0);
}

/** What the writer owner's load is measured from: its traffic counters and the topics it holds now. */
export async function writerLoadTotals(owner: WriterOwner): Promise<LoadTotals> {
  const topics = owner.registry.all();
  const { messagesIn, bytesIn, messagesOut, bytesOut } = owner.metrics;
  return {
    messagesIn: await total(messagesIn),
    bytesIn: await total(bytesIn),
    messagesOut: await total(messagesOut),
    bytesOut: await total(bytesOut),
    topicsOwned: topics.length,
    pendingEntries: topics.reduce((sum, topic) => sum + topic.pendingEntries, 0),
  };
}
