// Send latency of a LatencyLoad, as the transfer and rolling-restart benches print it.
import { percentile, type TimedAck } from '@ledgerline/cluster-harness';

/** The send latencies of the acknowledgements that arrived in [fromMs, toMs). */
export function latencies(load: { readonly acks: readonly TimedAck[] }, fromMs: number, toMs: number): number[] {
  return load.acks.filter((ack) => ack.atMs >= fromMs && ack.atMs < toMs).map((ack) => ack.latencyMs);
}

/** One table row: a window's sends and their latency percentiles, plus `extra` columns. */
export function latencyRow(window: string, values: number[], extra: Record<string, string | number> = {}) {
  const at = (p: number) => Number(percentile(values, p).toFixed(1));
  let max = 0;
  // A loop, not Math.max(...): a long window holds more sends than a call takes arguments.
  for (const value of values) max = Math.max(max, value);
  return {
    window,
    sends: values.length,
    'p50 ms': at(50),
    'p99 ms': at(99),
    'p99.9 ms': at(99.9),
    'p99.99 ms': at(99.99),
    'max ms': Number(max.toFixed(1)),
    ...extra,
  };
}
