import { Counter, Gauge, register as defaultRegistry, type Registry } from 'prom-client';

export interface ReadOnlyMetrics {
  messagesOut: Counter<'topic'>;
  bytesOut: Counter<'topic'>;
  topicsLoaded: Gauge<never>;
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
  };
  made.set(registry, metrics);
  return metrics;
}
