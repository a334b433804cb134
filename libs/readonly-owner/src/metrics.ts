import { Counter, Gauge, Histogram, register as defaultRegistry, type Registry } from 'prom-client';

export interface ReadOnlyMetrics {
  messagesOut: Counter<'topic'>;
  bytesOut: Counter<'topic'>;
  topicsLoaded: Gauge<never>;
  lacPropagation: Histogram<never>;
}

const made = new WeakMap<Registry, ReadOnlyMetrics>();

/** The read-only owner's metrics, once per registry. */
export function readOnlyMetrics(registry: Registry = defaultRegistry): ReadOnlyMetrics {
  const known = made.get(registry);
  if (known !== undefined) return known;
  const registers = [registry];
  const metrics: ReadOnlyMetrics = {
    messagesOut: new Counter({
      name: 'ledgerline_readonly_messages_out_total',
      help: 'Messages delivered to consumers by this read-only owner',
      labelNames: ['topic'],
      registers,
    }),
    bytesOut: new Counter({
      name: 'ledgerline_readonly_bytes_out_total',
      help: 'Message payload bytes delivered to consumers by this read-only owner',
      labelNames: ['topic'],
      registers,
    }),
    topicsLoaded: new Gauge({
      name: 'ledgerline_readonly_topics_loaded',
      help: 'Reader topics this read-only owner serves (each under a lease)',
      registers,
    }),
    lacPropagation: new Histogram({
      name: 'ledgerline_readonly_lac_propagation_seconds',
      help: "Time from the writer's store confirming an entry to its LAC notification reaching this read-only owner",
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
  };
  made.set(registry, metrics);
  return metrics;
}
