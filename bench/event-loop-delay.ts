// Event-loop delay of each process under load, the figure for the
// latency tail (p99 at most 20 ms, max at most 200 ms under full load).
//
// Every service exports prom-client's default metrics (service-kit's
// createMetrics). prom-client 15 reads nodejs_eventloop_lag_p99_seconds and
// _max_seconds from a perf_hooks.monitorEventLoopDelay histogram sampling
// every 10 ms (eventLoopMonitoringPrecision), and resets that histogram each
// time the metrics are collected, that is on every scrape of /metrics. So the
// gauges already hold one window's figures: a scrape just before a run opens
// the window, one just after reads the run's own p99 and max. Nothing else may
// scrape the process meanwhile (the bench's processes have no other scraper).
//
// What a sample is: Node records the time between two ticks of a 10 ms timer,
// so an idle loop reads about 10 ms and a loop blocked for 50 ms 50 to 60 ms;
// Node's HDR histogram keeps about three significant digits. A block counts
// once however long it lasts, so p99 is a share of ticks, not of time. The
// bench process (the client) is read the same way from a histogram of its own.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import type { Comparison } from './bench-report.js';

/** prom-client's default eventLoopMonitoringPrecision: the histogram's sampling interval, in ms. */
export const SAMPLING_INTERVAL_MS = 10;
/** The targets under full load. */
export const TARGET_P99_MS = 20;
export const TARGET_MAX_MS = 200;

/** A process to watch: a service by its metrics port, or the bench process itself (metricsPort undefined). */
export interface WatchedProcess {
  readonly name: string;
  readonly metricsPort: number | undefined;
}

export interface EventLoopDelay {
  p99Ms: number;
  maxMs: number;
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** A gauge's value in Prometheus text, whatever its labels; NaN when it is missing. */
function gauge(text: string, name: string): number {
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
  return match === null ? Number.NaN : Number(match[1]);
}

/** Scrapes a service's /metrics: its event-loop delay since the previous scrape (and a new window from now). */
export async function scrapeEventLoopDelay(metricsPort: number): Promise<EventLoopDelay> {
  const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  if (!response.ok) throw new Error(`/metrics on port ${metricsPort} answered ${response.status}`);
  const text = await response.text();
  const p99 = gauge(text, 'nodejs_eventloop_lag_p99_seconds');
  const max = gauge(text, 'nodejs_eventloop_lag_max_seconds');
  if (Number.isNaN(p99) || Number.isNaN(max)) {
    throw new Error(`/metrics on port ${metricsPort} has no nodejs_eventloop_lag_p99_seconds / _max_seconds`);
  }
  return { p99Ms: p99 * 1000, maxMs: max * 1000 };
}

/** An open window over every watched process; `close` reads each one's delay over the window. */
export interface EventLoopWindow {
  close(): Promise<Map<string, EventLoopDelay>>;
}

/** Opens a window: scrapes every service once (resetting its histogram) and starts this process's own histogram. */
export async function openEventLoopWindow(processes: readonly WatchedProcess[]): Promise<EventLoopWindow> {
  const own = monitorEventLoopDelay({ resolution: SAMPLING_INTERVAL_MS });
  for (const { metricsPort } of processes) if (metricsPort !== undefined) await scrapeEventLoopDelay(metricsPort);
  own.enable();
  return {
    async close() {
      own.disable();
      const delays = new Map<string, EventLoopDelay>();
      for (const { name, metricsPort } of processes) {
        delays.set(
          name,
          metricsPort === undefined
            ? { p99Ms: own.percentile(99) / 1e6, maxMs: own.max / 1e6 }
            : await scrapeEventLoopDelay(metricsPort),
        );
      }
      return delays;
    },
  };
}

/** Runs `measure` inside a window over `processes`, giving its result and each process's delay. */
export async function underWatch<T>(
  processes: readonly WatchedProcess[],
  measure: () => Promise<T>,
): Promise<{ result: T; delays: Map<string, EventLoopDelay> }> {
  const window = await openEventLoopWindow(processes);
  const result = await measure();
  return { result, delays: await window.close() };
}

/** The idle process's name in the tables: the delay the machine alone adds under the same load. */
export const IDLE_PROCESS = 'idle process (the floor)';

/**
 * A Node process that does nothing but measure its own event loop, exactly as
 * a service does (a 10 ms histogram, p99 and max as prom-client's gauges,
 * reset on every scrape), on a port of its own. Under full load its figures
 * are what the machine adds by itself: the wait for a core among the busy
 * processes, with no work of its own in front of its timer.
 */
const IDLE_SOURCE = `
const { createServer } = require('node:http');
const { monitorEventLoopDelay } = require('node:perf_hooks');
const histogram = monitorEventLoopDelay({ resolution: ${SAMPLING_INTERVAL_MS} });
histogram.enable();
const server = createServer((request, response) => {
  const text = 'nodejs_eventloop_lag_p99_seconds ' + histogram.percentile(99) / 1e9 + '\\n' +
    'nodejs_eventloop_lag_max_seconds ' + histogram.max / 1e9 + '\\n';
  histogram.reset();
  response.end(text);
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
process.stdin.on('end', () => process.exit(0)).resume();
`;

/** Starts the idle process; the bench stops it as it stops the services (it also ends when the bench's pipe closes). */
export async function startIdleProcess(): Promise<{ watched: WatchedProcess; child: ChildProcess }> {
  const child = spawn(process.execPath, ['-e', IDLE_SOURCE], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await Promise.race([
    once(lines, 'line'),
    once(child, 'exit').then(([code]) => {
      throw new Error(`the idle process exited with code ${String(code)} before it listened`);
    }),
  ])) as [string];
  return { watched: { name: IDLE_PROCESS, metricsPort: Number(line) }, child };
}

/** Table rows for one run: a row per process with its p99, max and whether both meet the targets. */
export function eventLoopRows(system: string, delays: Map<string, EventLoopDelay>): Record<string, string | number>[] {
  return [...delays].map(([process, { p99Ms, maxMs }]) => ({
    system,
    process,
    'p99 ms': round(p99Ms),
    'max ms': round(maxMs),
    target: process === IDLE_PROCESS ? '-' : p99Ms <= TARGET_P99_MS && maxMs <= TARGET_MAX_MS ? 'met' : 'missed',
  }));
}

/** What the table's heading says of its figures. */
export const EVENT_LOOP_TABLE_TITLE =
  `event-loop delay per process under full load (prom-client's nodejs_eventloop_lag_p99/_max_seconds over the run; ` +
  `samples every ${SAMPLING_INTERVAL_MS} ms, so an idle loop reads ${SAMPLING_INTERVAL_MS} ms; ` +
  `target p99 <= ${TARGET_P99_MS} ms, max <= ${TARGET_MAX_MS} ms)`;

/** The worst p99 and max of each process over several runs, beside the targets. */
export function eventLoopComparisons(
  runs: readonly Map<string, EventLoopDelay>[],
  processes: readonly string[],
): Comparison[] {
  return processes.flatMap((name) => {
    const delays = runs.flatMap((run) => {
      const delay = run.get(name);
      return delay === undefined ? [] : [delay];
    });
    const worst = (pick: (delay: EventLoopDelay) => number): number => round(Math.max(...delays.map(pick)));
    const versus = (what: string, ours: number, target: number): Comparison => ({
      figure: `event-loop delay ${what} under full load (worst run), ${name}`,
      unit: 'ms',
      ours,
      peer: `the issue's target (${target} ms)`,
      peerValue: target,
      higherIsBetter: false,
      target: { ratio: 1, atLeast: false },
    });
    if (delays.length === 0) return [];
    const p99Ms = worst((delay) => delay.p99Ms);
    const maxMs = worst((delay) => delay.maxMs);
    return [versus('p99', p99Ms, TARGET_P99_MS), versus('max', maxMs, TARGET_MAX_MS), ...againstIdle(runs, name)];
  });
}

/** The process's worst p99 beside the idle process's worst p99 over the same runs, when one watched them. */
function againstIdle(runs: readonly Map<string, EventLoopDelay>[], name: string): Comparison[] {
  const idle = runs.flatMap((run) => run.get(IDLE_PROCESS) ?? []);
  const ours = runs.flatMap((run) => run.get(name) ?? []);
  if (idle.length === 0 || ours.length === 0 || name === IDLE_PROCESS) return [];
  return [
    {
      figure: `event-loop delay p99 under full load (worst run), ${name}, against an idle process beside it`,
      unit: 'ms',
      ours: round(Math.max(...ours.map((delay) => delay.p99Ms))),
      peer: `${IDLE_PROCESS}: the machine's own delay under the same load`,
      peerValue: round(Math.max(...idle.map((delay) => delay.p99Ms))),
      higherIsBetter: false,
    },
  ];
}
