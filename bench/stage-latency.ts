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
