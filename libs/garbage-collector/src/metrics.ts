import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface CollectorMetrics {
  ledgersDeleted: Counter;
  orphansDeleted: Counter;
  deletionFailures: Counter;
  ownerTagMismatches: Counter;
  topicsFinished: Counter;
  referencedMarkersDropped: Counter;
  passes: Counter;
  passDuration: Histogram;
  pendingDeletions: Gauge;
  oldestPendingAge: Gauge;
  ownedShards: Gauge;
}

/** The collector's metrics, registered on `registry` (the service's own, never the global one). */
export function collectorMetrics(registry: Registry): CollectorMetrics {
  const registers = [registry];
  return {
    ledgersDeleted: new Counter({
      name: 'ledgerline_gc_ledgers_deleted_total',
      help: 'Marked ledgers deleted (or found gone) whose marker this instance cleared',
      registers,
    }),
    orphansDeleted: new Counter({
      name: 'ledgerline_gc_orphans_deleted_total',
      help: 'Unreferenced ledgers older than the grace period deleted by the orphan sweep',
      registers,
    }),
    deletionFailures: new Counter({
      name: 'ledgerline_gc_deletion_failures_total',
      help: 'Failed ledger deletions (each is retried with backoff)',
      registers,
    }),
    ownerTagMismatches: new Counter({
      name: 'ledgerline_gc_owner_tag_mismatches_total',
      help: 'Marked ledgers whose owner tags name another managed ledger or cursor: never deleted, left for a person',
      registers,
    }),
    topicsFinished: new Counter({
      name: 'ledgerline_gc_topics_finished_total',
      help: 'Deleted topics whose managed-ledger node was removed once every ledger was gone',
      registers,
    }),
    referencedMarkersDropped: new Counter({
      name: 'ledgerline_gc_referenced_markers_dropped_total',
      help: 'Markers of ledgers referenced again (ledger list or cursor): dropped, the ledger kept',
      registers,
    }),
    passes: new Counter({ name: 'ledgerline_gc_passes_total', help: 'Passes over the index', registers }),
    passDuration: new Histogram({
      name: 'ledgerline_gc_pass_duration_seconds',
      help: 'Duration of a pass',
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60, 300],
      registers,
    }),
    pendingDeletions: new Gauge({
      name: 'ledgerline_gc_pending_deletions',
      help: 'Markers this instance is working on',
      registers,
    }),
    oldestPendingAge: new Gauge({
      name: 'ledgerline_gc_oldest_pending_marker_age_seconds',
      help: 'Age of the oldest marker this instance is working on (0 when none)',
      registers,
    }),
    ownedShards: new Gauge({
      name: 'ledgerline_gc_owned_shards',
      help: 'Pending-deletions index shards this instance works on',
      registers,
    }),
  };
}
