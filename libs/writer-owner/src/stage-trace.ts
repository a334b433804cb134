import {
  createHistogram,
  monitorEventLoopDelay,
  PerformanceObserver,
  type IntervalHistogram,
  type RecordableHistogram,
} from 'node:perf_hooks';
import type { AppendTrace } from '@ledgerline/managed-ledger';
import { Gauge, type Registry } from 'prom-client';

/**
 * The stages the latency trace times (milliseconds, performance.now). A
 * publish: read -> appended (handed to the managed ledger) -> turn wait ->
 * store write -> stored (its append settled) -> answered (its response built);
 * the stored entry -> dispatched to a consumer here (first delivery); beside
 * them every garbage-collection pause and the event loop's delay.
 */
export const TraceStage = {
  READ_TO_APPENDED: 'publish_read_to_appended',
  TURN_WAIT: 'append_turn_wait',
  STORE_WRITE: 'store_write',
  APPENDED_TO_STORED: 'publish_appended_to_stored',
  STORED_TO_ANSWERED: 'publish_stored_to_answered',
  READ_TO_ANSWERED: 'publish_read_to_answered',
  STORED_TO_DISPATCHED: 'stored_to_dispatched',
  GC_PAUSE: 'gc_pause',
  EVENT_LOOP_DELAY: 'event_loop_delay',
} as const;
export type TraceStageName = (typeof TraceStage)[keyof typeof TraceStage];

const QUANTILES = [
  ['0.5', 50],
  ['0.99', 99],
  ['0.999', 99.9],
] as const;
/** Stored entries remembered for their first dispatch; past it they are all forgotten (a bound, not a cache). */
const MAX_REMEMBERED_ENTRIES = 100_000;

/**
 * A per-stage latency trace, on only with the `stageTrace` setting
 * (LEDGERLINE_STAGE_TRACE=1): a perf_hooks histogram per stage, in
 * microseconds, exported as `ledgerline_writer_stage_trace_ms{stage,quantile}`
 * (p50, p99, p99.9, max and count) and reset by each scrape, as prom-client's
 * event-loop gauges are: a bench scrapes before a stretch (opening it) and
 * after (reading it). Off, nothing is timed and nothing is kept.
 */
export class StageTrace implements AppendTrace {
  private readonly histograms = new Map<TraceStageName, RecordableHistogram>();
  private readonly storedAt = new Map<string, number>();
  private readonly loop: IntervalHistogram;
  private readonly gc: PerformanceObserver;

  constructor(registry: Registry) {
    for (const stage of Object.values(TraceStage)) {
      if (stage !== TraceStage.EVENT_LOOP_DELAY) this.histograms.set(stage, createHistogram());
    }
    this.loop = monitorEventLoopDelay({ resolution: 1 });
    this.loop.enable();
    this.gc = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) this.record(TraceStage.GC_PAUSE, entry.duration);
    });
    this.gc.observe({ entryTypes: ['gc'] });
    const collectInto = (gauge: Gauge<'stage' | 'quantile'>): void => this.collectInto(gauge);
    new Gauge({
      name: 'ledgerline_writer_stage_trace_ms',
      help: 'Per-stage latency trace (stageTrace on): quantiles, max and count per stage since the previous scrape',
      labelNames: ['stage', 'quantile'],
      registers: [registry],
      collect() {
        collectInto(this);
      },
    });
  }

  record(stage: TraceStageName, ms: number): void {
    this.histograms.get(stage)!.record(Math.max(1, Math.round(ms * 1000)));
  }

  turnWaited(ms: number): void {
    this.record(TraceStage.TURN_WAIT, ms);
  }

  written(ms: number): void {
    this.record(TraceStage.STORE_WRITE, ms);
  }

  /** An entry is stored at `ms`: its first dispatch is timed from then. */
  stored(ledgerId: number, entryId: number, ms: number): void {
    if (this.storedAt.size >= MAX_REMEMBERED_ENTRIES) this.storedAt.clear();
    this.storedAt.set(`${ledgerId}:${entryId}`, ms);
  }

  dispatched(ledgerId: number, entryId: number): void {
    const key = `${ledgerId}:${entryId}`;
    const storedMs = this.storedAt.get(key);
    if (storedMs === undefined) return;
    this.storedAt.delete(key);
    this.record(TraceStage.STORED_TO_DISPATCHED, performance.now() - storedMs);
  }

  stop(): void {
    this.loop.disable();
    this.gc.disconnect();
  }

  private collectInto(gauge: Gauge<'stage' | 'quantile'>): void {
    gauge.reset();
    const each: [TraceStageName, { count: number; max: number; percentile(p: number): number }, number][] = [
      ...[...this.histograms].map(([stage, h]): [TraceStageName, RecordableHistogram, number] => [stage, h, 1000]),
      // The loop histogram is in nanoseconds, and its samples include the 1 ms resolution.
      [TraceStage.EVENT_LOOP_DELAY, this.loop, 1_000_000],
    ];
    for (const [stage, histogram, perMs] of each) {
      gauge.set({ stage, quantile: 'count' }, histogram.count);
      if (histogram.count === 0) continue;
      for (const [label, percentile] of QUANTILES) {
        gauge.set({ stage, quantile: label }, histogram.percentile(percentile) / perMs);
      }
      gauge.set({ stage, quantile: 'max' }, histogram.max / perMs);
    }
    for (const histogram of this.histograms.values()) histogram.reset();
    this.loop.reset();
  }
}
