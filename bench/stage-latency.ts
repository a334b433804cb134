import { createHistogram, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

// Where an entry's time goes inside the writer owner, from its
// histograms (`ledgerline_writer_publish_latency_seconds` for received to
// stored, then `ledgerline_writer_stage_seconds`: stored_to_lac_hint,
// appended_to_delivered): scraped before and after a
// measured stretch, the difference gives that stretch's own samples.

/** Cumulative bucket counts by stage, then by upper bound in seconds. */
export type StageBuckets = Map<string, Map<number, number>>;

export async function scrapeStages(metricsPort: number): Promise<StageBuckets> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const stages: StageBuckets = new Map();
  // The first stage, received to stored, is the publish latency histogram.
  const pattern = /^ledgerline_writer_(stage|publish_latency)_seconds_bucket\{([^}]*)\} (\S+)$/gm;
  for (const match of text.matchAll(pattern)) {
    const labels = new Map([...match[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    const stage = match[1] === 'publish_latency' ? 'received_to_stored' : labels.get('stage');
    const le = labels.get('le');
    if (stage === undefined || le === undefined) continue;
    const buckets = stages.get(stage) ?? new Map<number, number>();
    buckets.set(le === '+Inf' ? Infinity : Number(le), Number(match[3]));
    stages.set(stage, buckets);
  }
  return stages;
}

/** The bucket bound at or under which `quantile` of the samples fall (an upper bound of that quantile), in ms. */
function quantileMs(counts: [number, number][], quantile: number): number | string {
  const total = counts.at(-1)?.[1] ?? 0;
  if (total === 0) return '-';
  const bound = counts.find(([, cumulative]) => cumulative >= quantile * total)?.[0] ?? Infinity;
  return bound === Infinity ? '> last bucket' : bound * 1000;
}

/** One row per stage: samples in the stretch and the bucket bounds of its p50 and p99, in ms. */
export function stageRows(label: string, before: StageBuckets, after: StageBuckets): Record<string, string | number>[] {
  return [...after].map(([stage, buckets]) => {
    const counts = [...buckets]
      .sort(([a], [b]) => a - b)
      .map(([le, cumulative]): [number, number] => [le, cumulative - (before.get(stage)?.get(le) ?? 0)]);
    return {
      system: `${label}: ${stage}`,
      samples: counts.at(-1)?.[1] ?? 0,
      p50AtMostMs: quantileMs(counts, 0.5),
      p99AtMostMs: quantileMs(counts, 0.99),
    };
  });
}

/**
 * The writer owner's per-stage trace (its `stageTrace` setting, LEDGERLINE_STAGE_TRACE=1): p50, p99, p99.9 and max
 * in ms per stage since the previous scrape (each scrape resets it), one row per stage.
 */
export async function scrapeTrace(metricsPort: number, label: string): Promise<Record<string, string | number>[]> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const stages = new Map<string, Record<string, number>>();
  for (const match of text.matchAll(/^ledgerline_writer_stage_trace_ms\{([^}]*)\} (\S+)$/gm)) {
    const labels = new Map([...match[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    const stage = labels.get('stage');
    const quantile = labels.get('quantile');
    if (stage === undefined || quantile === undefined) continue;
    const values = stages.get(stage) ?? {};
    values[quantile] = Number(match[2]);
    stages.set(stage, values);
  }
  return [...stages].map(([stage, values]) => traceRow(`${label}: ${stage}`, values));
}

/** A trace row: samples, then p50, p99, p99.9 and max in ms ('-' where none were taken). */
export function traceRow(system: string, values: Record<string, number>): Record<string, string | number> {
  const ms = (key: string): string | number => {
    const value = values[key];
    return value === undefined ? '-' : Number(value.toPrecision(3));
  };
  return {
    system,
    samples: values['count'] ?? 0,
    p50Ms: ms('0.5'),
    p99Ms: ms('0.99'),
    p999Ms: ms('0.999'),
    maxMs: ms('max'),
  };
}

/** This process's GC pauses and event-loop delay from now until the returned function is called, as trace rows. */
export function traceThisProcess(label: string): () => Record<string, string | number>[] {
  const pauses = createHistogram();
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.record(Math.max(1, Math.round(entry.duration * 1000)));
  });
  gc.observe({ entryTypes: ['gc'] });
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  return () => {
    gc.disconnect();
    loop.disable();
    const values = (h: { count: number; max: number; percentile(p: number): number }, perMs: number) => ({
      count: h.count,
      ...(h.count === 0
        ? {}
        : { '0.5': h.percentile(50) / perMs, '0.99': h.percentile(99) / perMs, '0.999': h.percentile(99.9) / perMs }),
      ...(h.count === 0 ? {} : { max: h.max / perMs }),
    });
    return [
      traceRow(`${label}: client gc_pause`, values(pauses, 1000)),
      traceRow(`${label}: client event_loop_delay`, values(loop, 1_000_000)),
    ];
  };
}
