// `npm run bench`: every benchmark the performance issue lists that can run
// today, each beside its peers in the same run, written to BENCHMARKS.md
// (machine, versions, date, our figure, each peer's figure, the ratio). The
// machine is shared and noisy: only ratios from one run mean anything.
//
//   npm run bench                # short sizes, a few minutes on 2 busy cores
//   npm run bench -- --full      # every script's --full sizes (much longer)
//   npm run bench -- --only publish,offsets   # some sections (BENCHMARKS.md then holds only those)
//   npm run bench -- --out <file>             # write somewhere else than BENCHMARKS.md
//   BENCH_CPU_PROF=<dir> npx tsx bench/<script>.ts   # the services it starts (baselines.ts) write
//                                                   # V8 CPU profiles under <dir>/<service>/
//
// Every section starts its own throwaway redis-server / nats-server.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem, type as osType, release } from 'node:os';
import { join, resolve } from 'node:path';
import {
  formatNumber,
  full,
  printReport,
  ratio,
  verdict,
  type BenchReport,
  type BenchTable,
  type Comparison,
} from './bench-report.js';

const ROOT = resolve(__dirname, '..');

interface Section {
  name: string;
  /** Loaded only when the section runs, so each script reads its sizes after the runner set the mode. */
  load: () => Promise<{ run: () => Promise<BenchReport> }>;
}

const SECTIONS: Section[] = [
  { name: 'publish', load: () => import('./writer-owner-publish.js') },
  { name: 'managed-ledger', load: () => import('./managed-ledger-append.js') },
  { name: 'encoding', load: () => import('./message-format-encode.js') },
  { name: 'dispatch', load: () => import('./subscriptions-dispatch.js') },
  { name: 'ack-holes', load: () => import('./cursor-codec-sizes.js') },
  { name: 'offsets', load: () => import('./offset-index-lookup.js') },
  { name: 'reader-by-time', load: () => import('./reader-by-time.js') },
  { name: 'topics', load: () => import('./metadata-service-topics.js') },
  { name: 'gc', load: () => import('./gc-reclaim.js') },
  { name: 'consume', load: () => import('./consume-shared.js') },
  { name: 'ack-loop', load: () => import('./consume-ack-loop.js') },
  { name: 'standalone-publish', load: () => import('./standalone-publish.js') },
  { name: 'sqlite-checkpoints', load: () => import('./sqlite-checkpoint-stalls.js') },
  { name: 'readonly-fanout', load: () => import('./readonly-fanout.js') },
  { name: 'owner-crash', load: () => import('./owner-crash-failover.js') },
  { name: 'balancer-scale-out', load: () => import('./balancer-scale-out.js') },
  { name: 'transfer-latency', load: () => import('./transfer-latency.js') },
  { name: 'rolling-restart', load: () => import('./rolling-restart.js') },
  { name: 'drain-many-topics', load: () => import('./drain-many-topics.js') },
  { name: 'writer-store-cut', load: () => import('./writer-store-cut.js') },
  { name: 'kafka-produce', load: () => import('./kafka-gateway-produce.js') },
  { name: 'kafka-fetch', load: () => import('./kafka-gateway-fetch.js') },
  { name: 'kafka-fetch-encode', load: () => import('./kafka-fetch-encode.js') },
  { name: 'kafka-catch-up', load: () => import('./kafka-gateway-catch-up.js') },
  { name: 'kafka-group-handover', load: () => import('./kafka-group-handover.js') },
  { name: 'kafka-static-restart', load: () => import('./kafka-static-restart.js') },
];

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}

function commandVersion(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8', timeout: 10_000 }).trim().split('\n')[0] ?? '';
  } catch {
    return 'not found';
  }
}

function packageVersion(name: string): string {
  try {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
      version: string;
    };
    return manifest.version;
  } catch {
    return 'not installed';
  }
}

function gitCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

function machineLines(loadBefore: number[], loadAfter: number[], durationS: number): string[] {
  const cpu = cpus();
  const load = (values: number[]): string => values.map((v) => v.toFixed(1)).join(' / ');
  return [
    `- date: ${new Date().toISOString()} (run took ${Math.round(durationS)} s, ${full ? '--full' : 'default sizes'}, commit ${gitCommit()})`,
    `- machine: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ${osType()} ${release()}`,
    `- load average (1/5/15 min): ${load(loadBefore)} before, ${load(loadAfter)} after — the machine is shared; compare ratios, not absolute figures`,
    `- versions: Node ${process.version}, ${commandVersion('redis-server', ['--version'])}, nats-server ${commandVersion('nats-server', ['--version'])}`,
    `- libraries: @grpc/grpc-js ${packageVersion('@grpc/grpc-js')}, @bufbuild/protobuf ${packageVersion('@bufbuild/protobuf')}, ` +
      `ioredis ${packageVersion('ioredis')}, @nats-io/jetstream ${packageVersion('@nats-io/jetstream')}, better-sqlite3 ${packageVersion('better-sqlite3')}`,
  ];
}

function cell(value: unknown): string {
  if (typeof value === 'number') return formatNumber(value);
  if (value === undefined) return '';
  return String(value).replace(/\|/g, '\\|');
}

function markdownTable(table: BenchTable): string[] {
  const columns = [...new Set(table.rows.flatMap((row) => Object.keys(row)))];
  if (columns.length === 0) return [];
  return [
    `| ${columns.join(' | ')} |`,
    `| ${columns.map(() => '---').join(' | ')} |`,
    ...table.rows.map((row) => `| ${columns.map((column) => cell(row[column])).join(' | ')} |`),
  ];
}

function comparisonLines(reports: BenchReport[]): string[] {
  const rows = reports.flatMap((report) => report.comparisons);
  const missing = reports.flatMap((report) => report.notMeasured ?? []);
  return [
    '| figure | ours | peer | peer figure | ours / peer | target |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (c: Comparison) =>
        `| ${cell(c.figure)} | ${formatNumber(c.ours)} ${c.unit} | ${cell(c.peer)} | ${formatNumber(c.peerValue)} ${c.unit} | ` +
        `${ratio(c).toFixed(2)} (${c.higherIsBetter ? 'higher' : 'lower'} is better) | ${verdict(c)} |`,
    ),
    ...missing.map((m) => `| ${cell(m.figure)} | not measured: ${cell(m.reason)} | | | | |`),
  ];
}

function render(reports: BenchReport[], machine: string[]): string {
  const lines = [
    '# Benchmarks',
    '',
    'Written by `npm run bench` (bench/run.ts); each section is one script in `bench/`, run on its own with',
    '`npx tsx bench/<script>.ts`. Every peer ran in the same run on the same machine, against throwaway',
    'servers the run started itself. Ratios are ours / peer.',
    '',
    ...machine,
    '',
    '## Ours beside the peers',
    '',
    ...comparisonLines(reports),
  ];
  for (const report of reports) {
    lines.push('', `## ${report.section}`, '', report.setup);
    for (const table of report.tables) lines.push('', `### ${table.title}`, '', ...markdownTable(table));
    for (const missing of report.notMeasured ?? [])
      lines.push('', `Not measured: ${missing.figure} (${missing.reason}).`);
  }
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  // Each script picks its short sizes when the runner runs it without --full (see bench-report.ts).
  if (!full) process.env['LEDGERLINE_BENCH_QUICK'] = '1';
  const only = argument('--only')?.split(',');
  const unknown = only?.filter((name) => !SECTIONS.some((section) => section.name === name)) ?? [];
  if (unknown.length > 0) {
    throw new Error(`unknown section ${unknown.join(', ')}; sections: ${SECTIONS.map((s) => s.name).join(', ')}`);
  }
  const out = resolve(ROOT, argument('--out') ?? 'BENCHMARKS.md');
  const loadBefore = loadavg();
  const started = performance.now();
  const reports: BenchReport[] = [];
  for (const section of SECTIONS) {
    if (only !== undefined && !only.includes(section.name)) continue;
    const sectionStarted = performance.now();
    console.log(`\n=== ${section.name}`);
    const report = await (await section.load()).run();
    printReport(report);
    console.log(`(${section.name} took ${((performance.now() - sectionStarted) / 1000).toFixed(0)} s)`);
    reports.push(report);
  }
  const machine = machineLines(loadBefore, loadavg(), (performance.now() - started) / 1000);
  writeFileSync(out, render(reports, machine));
  // Tables are written as they come; prettier aligns them as `npm run lint` expects of a committed file.
  try {
    execFileSync(join(ROOT, 'node_modules', '.bin', 'prettier'), ['--write', out], { stdio: 'ignore' });
  } catch {
    console.log('(prettier could not format the file; it is still complete)');
  }
  console.log(`\nwrote ${out}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
