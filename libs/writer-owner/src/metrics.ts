import { Counter, Gauge, Histogram, register as defaultRegistry, type Registry } from 'prom-client';
import type { StageTrace } from './stage-trace.js';

export interface WriterMetrics {
  messagesIn: Counter<'topic'>;
  bytesIn: Counter<'topic'>;
  messagesOut: Counter<'topic'>;
  bytesOut: Counter<'topic'>;
  publishLatency: Histogram<never>;
  /**
   * Where an entry's time goes after it is stored, by stage (DeliveryStage):
   * with publishLatency (received to stored) these are the end-to-end
   * latency's parts, so its tail can be traced to the group commit, the LAC
   * hint or the dispatch. One child per stage, made once: observing on the
   * hot path looks no labels up.
   */
  stageLatency: Record<DeliveryStageName, { observe(seconds: number): void }>;
  dedupHits: Counter<'topic'>;
  leasesHeld: Gauge<never>;
  topicsLoaded: Gauge<never>;
  /** 1 while the ledger store answers, 0 once it answered nothing for storeUnreachableReleaseMs. */
  ledgerStoreReachable: Gauge<never>;
  /** Topics let go because the ledger store could not be reached, by outcome (moved, released). */
  storeUnreachableReleases: Counter<'outcome'>;
  backlog: Gauge<'topic' | 'subscription'>;
  unacked: Gauge<'topic' | 'subscription'>;
  ackHoles: Gauge<'topic' | 'subscription'>;
  cursorStateBytes: Gauge<'topic' | 'subscription'>;
  publishFailures: Counter<'reason'>;
  /** The per-stage latency trace, while the `stageTrace` setting has it on; undefined otherwise. */
  trace: StageTrace | undefined;
  /**
   * Sets what refreshes the per-subscription gauges (backlog, unacked, ack
   * holes, cursor state bytes); it runs on every scrape, so the gauges do not
   * wait for a GetTopicStats call to move.
   */
  refreshSubscriptionsWith(refresh: () => Promise<void>): void;
}

const made = new WeakMap<Registry, WriterMetrics>();

type Registers = Registry[];
type Collect = () => Promise<void> | undefined;

/**
 * The writer owner's metrics, once per registry. Ranges beyond the persist
 * limit are counted by the managed ledger
 * (`ledgerline_cursor_ranges_not_persisted_total`), which registers itself.
 */
export function writerMetrics(registry: Registry = defaultRegistry): WriterMetrics {
  const known = made.get(registry);
  if (known !== undefined) return known;
  const registers = [registry];
  let refresh: (() => Promise<void>) | undefined;
  // One refresh serves the four gauges of a scrape (prom-client collects them together).
  let refreshing: Promise<void> | undefined;
  const collect = (): Promise<void> | undefined => {
    if (refresh === undefined) return undefined;
    refreshing ??= refresh().finally(() => (refreshing = undefined));
    return refreshing;
  };
  // Made in this order, which is the order a scrape lists them in.
  const metrics: WriterMetrics = {
    refreshSubscriptionsWith: (source) => (refresh = source),
    trace: undefined,
    ...trafficCounters(registers),
    ...publishMetrics(registers),
    ...ownershipGauges(registers),
    ...subscriptionGauges(registers, collect),
    publishFailures: new Counter({
      name: 'ledgerline_writer_publish_failures_total',
      help: 'Publishes refused or failed, by reason',
      labelNames: ['reason'],
      registers,
    }),
  };
  made.set(registry, metrics);
  return metrics;
}

/** Messages and bytes in (stored) and out (delivered), per topic. */
function trafficCounters(
  registers: Registers,
): Pick<WriterMetrics, 'messagesIn' | 'bytesIn' | 'messagesOut' | 'bytesOut'> {
  return {
    messagesIn: new Counter({
      name: 'ledgerline_writer_messages_in_total',
      help: 'Messages stored',
      labelNames: ['topic'],
      registers,
    }),
    bytesIn: new Counter({
      name: 'ledgerline_writer_bytes_in_total',
      help: 'Entry bytes stored',
      labelNames: ['topic'],
      registers,
    }),
    messagesOut: new Counter({
      name: 'ledgerline_writer_messages_out_total',
      help: 'Messages delivered to consumers',
      labelNames: ['topic'],
      registers,
    }),
    bytesOut: new Counter({
      name: 'ledgerline_writer_bytes_out_total',
      help: 'Payload bytes delivered to consumers',
      labelNames: ['topic'],
      registers,
    }),
  };
}

/**
 * The stages of `ledgerline_writer_stage_seconds`. The one before them, a
 * publish request read to its entry stored, is
 * `ledgerline_writer_publish_latency_seconds`, observed once per publish.
 */
export const DeliveryStage = {
  /** An entry stored, to its LAC hint published for read-only owners. */
  STORED_TO_LAC_HINT: 'stored_to_lac_hint',
  /** An entry appended (its broker timestamp, before the store write), to its first delivery to a consumer here. */
  APPENDED_TO_DELIVERED: 'appended_to_delivered',
} as const;
export type DeliveryStageName = (typeof DeliveryStage)[keyof typeof DeliveryStage];

const STAGE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

function stageChildren(histogram: Histogram<'stage'>): WriterMetrics['stageLatency'] {
  return {
    [DeliveryStage.STORED_TO_LAC_HINT]: histogram.labels(DeliveryStage.STORED_TO_LAC_HINT),
    [DeliveryStage.APPENDED_TO_DELIVERED]: histogram.labels(DeliveryStage.APPENDED_TO_DELIVERED),
  };
}

function publishMetrics(registers: Registers): Pick<WriterMetrics, 'publishLatency' | 'stageLatency' | 'dedupHits'> {
  return {
    stageLatency: stageChildren(
      new Histogram({
        name: 'ledgerline_writer_stage_seconds',
        help: 'Time an entry spends in each stage after it is stored: stored_to_lac_hint, appended_to_delivered (first deliveries; a consumer catching up on a backlog shows as long delays); received to stored is ledgerline_writer_publish_latency_seconds',
        labelNames: ['stage'],
        buckets: STAGE_BUCKETS,
        registers,
      }),
    ),
    publishLatency: new Histogram({
      name: 'ledgerline_writer_publish_latency_seconds',
      help: 'From a publish request read to its receipt (the ledger store holds the entry)',
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    dedupHits: new Counter({
      name: 'ledgerline_writer_dedup_hits_total',
      help: 'Publishes answered as duplicates',
      labelNames: ['topic'],
      registers,
    }),
  };
}

function ownershipGauges(
  registers: Registers,
): Pick<WriterMetrics, 'leasesHeld' | 'topicsLoaded' | 'ledgerStoreReachable' | 'storeUnreachableReleases'> {
  const ledgerStoreReachable = new Gauge({
    name: 'ledgerline_writer_ledger_store_reachable',
    help: '1 while the ledger store answers; 0 once it answered nothing for storeUnreachableReleaseMs',
    registers,
  });
  ledgerStoreReachable.set(1);
  return {
    ledgerStoreReachable,
    storeUnreachableReleases: new Counter({
      name: 'ledgerline_writer_store_unreachable_releases_total',
      help: 'Topics let go because the ledger store could not be reached, by outcome (moved, released)',
      labelNames: ['outcome'],
      registers,
    }),
    leasesHeld: new Gauge({
      name: 'ledgerline_writer_leases_held',
      help: 'Topic leases this instance holds',
      registers,
    }),
    topicsLoaded: new Gauge({
      name: 'ledgerline_writer_topics_loaded',
      help: 'Topics loaded on this instance',
      registers,
    }),
  };
}

/** The per-subscription gauges: each scrape refreshes them first, through `collect`. */
function subscriptionGauges(
  registers: Registers,
  collect: Collect,
): Pick<WriterMetrics, 'backlog' | 'unacked' | 'ackHoles' | 'cursorStateBytes'> {
  return {
    backlog: new Gauge({
      name: 'ledgerline_writer_subscription_backlog_messages',
      help: 'Messages not yet consumed, per subscription',
      labelNames: ['topic', 'subscription'],
      registers,
      collect,
    }),
    unacked: new Gauge({
      name: 'ledgerline_writer_subscription_unacked_messages',
      help: 'Messages delivered and not acknowledged',
      labelNames: ['topic', 'subscription'],
      registers,
      collect,
    }),
    ackHoles: new Gauge({
      name: 'ledgerline_writer_subscription_ack_holes',
      help: 'Acknowledged ranges above the mark-delete position',
      labelNames: ['topic', 'subscription'],
      registers,
      collect,
    }),
    cursorStateBytes: new Gauge({
      name: 'ledgerline_writer_cursor_state_bytes',
      help: 'Bytes of the last cursor snapshot',
      labelNames: ['topic', 'subscription'],
      registers,
      collect,
    }),
  };
}
