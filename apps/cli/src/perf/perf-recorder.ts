import { closeSync, openSync, writeSync } from 'node:fs';
import { build, HistogramLogWriter, type Histogram } from 'hdr-histogram-js';

/** Latencies are recorded in microseconds; anything above an hour is clamped to it. */
const MAX_LATENCY_US = 3_600_000_000;

/** Latency percentiles in milliseconds. */
export interface LatencyMs {
  p50: number;
  p99: number;
  p999: number;
  max: number;
}

/** One report: an interval (about a second) or the whole run. */
export interface PerfReport {
  type: 'interval' | 'summary';
  mode: string;
  elapsedSeconds: number;
  messages: number;
  msgPerSecond: number;
  mbPerSecond: number;
  errors: number;
  latencyMs: LatencyMs;
}

function newHistogram(): Histogram {
  return build({ lowestDiscernibleValue: 1, highestTrackableValue: MAX_LATENCY_US, numberOfSignificantValueDigits: 3 });
}

function round(value: number, digits = 3): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

function latencyOf(histogram: Histogram): LatencyMs {
  if (histogram.totalCount === 0) return { p50: 0, p99: 0, p999: 0, max: 0 };
  // Percentiles come back as the top of their bucket; none is above the exact maximum.
  const max = histogram.maxValue;
  const at = (percentile: number): number => round(Math.min(histogram.getValueAtPercentile(percentile), max) / 1000);
  return { p50: at(50), p99: at(99), p999: at(99.9), max: round(max / 1000) };
}

/**
 * Counts messages and bytes and records latencies in HDR histograms: one per
 * interval (reset at each report) and one for the whole run, and optionally
 * writes every interval histogram to an HDR log file (HistogramLogWriter's
 * format, readable by HdrHistogram's tools).
 */
export class PerfRecorder {
  private readonly interval = newHistogram();
  private readonly total = newHistogram();
  private intervalMessages = 0;
  private intervalBytes = 0;
  private totalMessages = 0;
  private totalBytes = 0;
  private errors = 0;
  private readonly startedAt = performance.now();
  private intervalStartedAt = this.startedAt;
  private readonly log: { fd: number; writer: HistogramLogWriter } | undefined;

  constructor(
    private readonly mode: string,
    histogramFile: string | undefined,
  ) {
    if (histogramFile === undefined) return;
    const fd = openSync(histogramFile, 'w');
    const writer = new HistogramLogWriter((text) => writeSync(fd, text));
    writer.outputComment(`ledgerline perf ${mode}, latencies in microseconds`);
    writer.outputStartTime(Date.now());
    writer.baseTime = Date.now();
    writer.outputLegend();
    this.log = { fd, writer };
  }

  /** One message done, `latencyUs` after it started. */
  record(latencyUs: number, bytes: number): void {
    const value = Math.min(MAX_LATENCY_US, Math.max(1, Math.round(latencyUs)));
    this.interval.recordValue(value);
    this.total.recordValue(value);
    this.intervalMessages++;
    this.intervalBytes += bytes;
    this.totalMessages++;
    this.totalBytes += bytes;
  }

  /** One message failed. */
  failed(): void {
    this.errors++;
  }

  /** The interval since the last report, then starts a new one. */
  tick(): PerfReport {
    const now = performance.now();
    const seconds = Math.max(0.001, (now - this.intervalStartedAt) / 1000);
    const report: PerfReport = {
      type: 'interval',
      mode: this.mode,
      elapsedSeconds: round((now - this.startedAt) / 1000, 1),
      messages: this.intervalMessages,
      msgPerSecond: Math.round(this.intervalMessages / seconds),
      mbPerSecond: round(this.intervalBytes / seconds / 1024 / 1024, 2),
      errors: this.errors,
      latencyMs: latencyOf(this.interval),
    };
    this.log?.writer.outputIntervalHistogram(
      this.interval,
      (this.intervalStartedAt - this.startedAt) / 1000,
      (now - this.startedAt) / 1000,
      1,
    );
    this.interval.reset();
    this.intervalMessages = 0;
    this.intervalBytes = 0;
    this.intervalStartedAt = now;
    return report;
  }

  /** The whole run; closes the log file. */
  summary(): PerfReport {
    const seconds = Math.max(0.001, (performance.now() - this.startedAt) / 1000);
    if (this.log !== undefined) closeSync(this.log.fd);
    return {
      type: 'summary',
      mode: this.mode,
      elapsedSeconds: round(seconds, 1),
      messages: this.totalMessages,
      msgPerSecond: Math.round(this.totalMessages / seconds),
      mbPerSecond: round(this.totalBytes / seconds / 1024 / 1024, 2),
      errors: this.errors,
      latencyMs: latencyOf(this.total),
    };
  }
}

/** A report as one human line. */
export function reportLine(report: PerfReport): string {
  const { latencyMs: l } = report;
  const head =
    report.type === 'summary'
      ? `${report.mode} summary: ${report.messages} msgs in ${report.elapsedSeconds} s,`
      : `${report.mode}:`;
  return (
    `${head} ${report.msgPerSecond} msg/s ${report.mbPerSecond} MB/s | latency ms p50 ${l.p50} p99 ${l.p99} ` +
    `p99.9 ${l.p999} max ${l.max}${report.errors > 0 ? ` | errors ${report.errors}` : ''}`
  );
}
