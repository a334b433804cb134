// What every bench script hands to bench/run.ts (`npm run bench`), and the
// size every script picks: a script run on its own prints its tables; the
// runner collects the same tables from each script's `run()` and writes
// BENCHMARKS.md.

// tsx turns source maps on. With them, each error whose stack is read costs this process about a millisecond (grpc-js
// formats the caller's stack of every call that fails, as each producer's stream does when its topic moves), on the
// cores the services measured share. An application pays that only when it turns them on itself.
process.setSourceMapsEnabled(false);

/** `--full`: longer runs, bigger states (every script and the runner take it). */
export const full = process.argv.includes('--full');
/**
 * True when bench/run.ts runs the scripts for its default run (it sets
 * LEDGERLINE_BENCH_QUICK before it loads them), so that every benchmark fits
 * in a few minutes on a busy 2-core machine: each script then takes its
 * smallest sizes that still give steady ratios. A function, not a constant:
 * the runner imports this module before it sets the variable.
 */
export function quick(): boolean {
  return !full && process.env['LEDGERLINE_BENCH_QUICK'] === '1';
}

/** A numeric `--<name> <value>` flag of the script's command line, or `fallback` when it is not given. */
export function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
}

/** Picks a size by mode: the runner's short default, a script's own default, or --full. */
export function sized<T>(sizes: { quick: T; normal: T; full: T }): T {
  return full ? sizes.full : quick() ? sizes.quick : sizes.normal;
}

/** A table as console.table prints it: one object per row, the same keys in every row. */
export interface BenchTable {
  title: string;
  rows: Record<string, string | number | boolean | undefined>[];
}

/** One figure of ours beside a peer's, from the same run. */
export interface Comparison {
  /** What is measured, e.g. "publish 1 KiB, 1 partition, batching off". */
  figure: string;
  unit: string;
  ours: number;
  peer: string;
  peerValue: number;
  /** True when more is better (throughput); false for latency, bytes, reads. */
  higherIsBetter: boolean;
  /** The target for ours / peer, if it sets one (e.g. ">= 0.5" for throughput, "<= 2" for latency). */
  target?: { ratio: number; atLeast: boolean };
}

/** A figure the runner cannot measure yet, and why. */
export interface NotMeasured {
  figure: string;
  reason: string;
}

export interface BenchReport {
  section: string;
  /** What the section ran, in a sentence (sizes, rates). */
  setup: string;
  tables: BenchTable[];
  comparisons: Comparison[];
  notMeasured?: NotMeasured[];
}

/** ours / peer, the way a reader compares: above 1 means ours is bigger. */
export function ratio(comparison: Comparison): number {
  return comparison.peerValue === 0 ? Number.NaN : comparison.ours / comparison.peerValue;
}

/** "met", "missed" or "" (no target). */
export function verdict(comparison: Comparison): string {
  const { target } = comparison;
  if (target === undefined) return '';
  const value = ratio(comparison);
  const met = target.atLeast ? value >= target.ratio : value <= target.ratio;
  return `${met ? 'met' : 'missed'} (target ${target.atLeast ? '>=' : '<='} ${target.ratio})`;
}

/** Prints a script's report to the console, as the scripts did before the runner collected them. */
export function printReport(report: BenchReport): void {
  console.log(`\n${report.section}: ${report.setup}`);
  for (const table of report.tables) {
    console.log(`\n${table.title}`);
    console.table(table.rows);
  }
  for (const c of report.comparisons) {
    const line = `${c.figure}: ours ${formatNumber(c.ours)} ${c.unit}, ${c.peer} ${formatNumber(c.peerValue)}`;
    console.log(`${line}, ratio ${ratio(c).toFixed(2)} ${verdict(c)}`.trimEnd());
  }
  for (const missing of report.notMeasured ?? []) console.log(`${missing.figure}: not measured (${missing.reason})`);
}

export function formatNumber(value: number | undefined): string {
  if (value === undefined || Number.isNaN(value)) return '';
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  return Math.abs(value) >= 100 ? Math.round(value).toLocaleString('en-US') : value.toPrecision(3);
}

/** Runs a script's report on its own (when the file is the entry point) and prints it. */
export function runAlone(entry: NodeJS.Module, run: () => Promise<BenchReport>): void {
  if (require.main !== entry) return;
  run().then(
    (report) => {
      printReport(report);
      // Child processes and sockets a script left are the script's bug, but must not hang a bench run.
      process.exit(0);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
