// Cursor state sizes and speeds for every encoding, over ack patterns with
// many holes. A hole is an unacknowledged entry below the highest
// acknowledged one: what a cursor must remember to avoid redelivery.
//
//   npx tsx bench/cursor-codec-sizes.ts                 # hole counts up to 1M (about a minute)
//   npx tsx bench/cursor-codec-sizes.ts --max 10000000  # the full table, 10M holes (several minutes)
//   options: --patterns alternating,random50,clustered,sparse  --entries-per-ledger 50000
// "heap MB" is the measured growth of the heap (plus array buffers) while the
// AckSet is built, after forced GCs; below about 0.5 MB it is within noise.
// "est MB" is AckSet.memoryBytes(), the containers' own estimate.
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { AckSet, createCursorState, decodeCursorState, encodeCursorState } from '@ledgerline/cursor-codec';
import type { CursorState, CursorStateFormat } from '@ledgerline/cursor-codec';
import { seededRandom } from './seeded-random.js';
import { full, quick, type BenchReport, type Comparison } from './bench-report.js';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const HOLE_COUNTS = [10_000, 100_000, 1_000_000, 10_000_000];
const PATTERNS = ['alternating', 'random50', 'clustered', 'sparse'] as const;
type Pattern = (typeof PATTERNS)[number];
const FIRST_LEDGER = 1000;

interface Variant {
  name: string;
  format: CursorStateFormat | 'auto';
  compression?: 'none';
}
const VARIANTS: Variant[] = [
  { name: 'pulsar-ranges', format: 'pulsar-ranges' },
  { name: 'long-array', format: 'long-array' },
  { name: 'compact', format: 'compact' },
  { name: 'compact (no deflate)', format: 'compact', compression: 'none' },
  { name: 'auto', format: 'auto' },
];

/**
 * Calls back with acknowledged runs [first, last] of global entry indexes,
 * in order, until `holes` unacknowledged entries lie below the last run.
 */
function generate(pattern: Pattern, holes: number, emit: (first: number, last: number) => void): number {
  const next = seededRandom(holes * 7 + pattern.length);
  let position = 0;
  let holesLeft = holes;
  while (holesLeft > 0) {
    let gap: number;
    let run: number;
    if (pattern === 'alternating') {
      gap = 1;
      run = 1;
    } else if (pattern === 'random50') {
      gap = 1;
      while (next() < 0.5) gap++;
      run = 1;
      while (next() < 0.5) run++;
    } else if (pattern === 'clustered') {
      gap = 1 + Math.floor(next() * 100);
      run = 100 + Math.floor(next() * 1900);
    } else {
      // 0.1% unacknowledged: geometric gaps between single holes, so generation costs O(holes), not O(span).
      gap = 1;
      run = Math.max(1, Math.floor(Math.log(1 - next()) / Math.log(0.999)));
    }
    gap = Math.min(gap, holesLeft);
    holesLeft -= gap;
    position += gap;
    emit(position, position + run - 1);
    position += run;
  }
  return position;
}

function buildState(pattern: Pattern, holes: number, entriesPerLedger: number): { state: CursorState; span: number } {
  const acked = new AckSet();
  const span = generate(pattern, holes, (first, last) => {
    // Split a run where it crosses into the next ledger.
    for (let start = first; start <= last;) {
      const ledger = Math.floor(start / entriesPerLedger);
      const end = Math.min(last, (ledger + 1) * entriesPerLedger - 1);
      acked.addRange(FIRST_LEDGER + ledger, start - ledger * entriesPerLedger, end - ledger * entriesPerLedger);
      start = end + 1;
    }
  });
  return { state: createCursorState({ markDelete: { ledgerId: FIRST_LEDGER, entryId: -1 }, acked }), span };
}

function heapBytes(): number {
  // Several passes, so that garbage from the previous measurement (and its external buffers) is gone.
  for (let pass = 0; pass < 3; pass++) collectGarbage();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

function timed<T>(work: () => T): { value: T; ms: number } {
  const start = process.hrtime.bigint();
  const value = work();
  return { value, ms: Number(process.hrtime.bigint() - start) / 1e6 };
}

interface Row {
  pattern: string;
  holes: number;
  ranges: number;
  span: number;
  heapMb: number;
  estimateMb: number;
  variant: string;
  chosen: string;
  bytes: number | undefined;
  encodeMs: number | undefined;
  decodeMs: number | undefined;
  note: string;
}

function measure(
  variant: Variant,
  state: CursorState,
): Omit<Row, 'pattern' | 'holes' | 'ranges' | 'span' | 'heapMb' | 'estimateMb'> {
  const options = {
    format: variant.format,
    maxRangesToPersist: Number.MAX_SAFE_INTEGER,
    ...(variant.compression === undefined ? {} : { compactCompression: variant.compression }),
  };
  let encoded;
  try {
    encoded = timed(() => encodeCursorState(state, options));
  } catch (error) {
    const reason = (error as { reason?: string }).reason ?? String(error);
    return {
      variant: variant.name,
      chosen: '-',
      bytes: undefined,
      encodeMs: undefined,
      decodeMs: undefined,
      note: reason,
    };
  }
  const decoded = timed(() => decodeCursorState(encoded.value.bytes));
  const same =
    decoded.value.acked.size() === state.acked.size() && decoded.value.acked.rangeCount() === state.acked.rangeCount();
  return {
    variant: variant.name,
    chosen: encoded.value.format,
    bytes: encoded.value.bytes.length,
    encodeMs: encoded.ms,
    decodeMs: decoded.ms,
    note: same && encoded.value.complete ? '' : 'MISMATCH',
  };
}

function format(row: Row): string[] {
  const fixed = (value: number | undefined, digits: number): string =>
    value === undefined ? '-' : value.toFixed(digits);
  return [
    row.pattern,
    row.holes.toLocaleString('en-US'),
    row.ranges.toLocaleString('en-US'),
    row.span.toLocaleString('en-US'),
    row.variant,
    row.chosen,
    row.bytes === undefined ? '-' : row.bytes.toLocaleString('en-US'),
    fixed(row.bytes === undefined ? undefined : row.bytes / 1e6, 3),
    fixed(row.bytes === undefined ? undefined : row.bytes / row.holes, 3),
    fixed(row.encodeMs, 0),
    fixed(row.decodeMs, 0),
    row.heapMb.toFixed(2),
    row.estimateMb.toFixed(2),
    row.note,
  ];
}

const HEADER = [
  'pattern',
  'holes',
  'ranges',
  'span',
  'format',
  'chosen',
  'bytes',
  'MB',
  'B/hole',
  'enc ms',
  'dec ms',
  'AckSet MB',
  'note',
];

function printTable(rows: string[][]): void {
  const widths = HEADER.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]): string => cells.map((cell, column) => cell.padStart(widths[column] ?? 0)).join('  ');
  console.log(line(HEADER));
  for (const row of rows) console.log(line(row));
}

function main(): void {
  const { values } = parseArgs({
    options: {
      max: { type: 'string', default: '1000000' },
      patterns: { type: 'string', default: PATTERNS.join(',') },
      'entries-per-ledger': { type: 'string', default: '50000' },
    },
  });
  const max = Number(values.max);
  const entriesPerLedger = Number(values['entries-per-ledger']);
  const patterns = values.patterns
    .split(',')
    .filter((name): name is Pattern => (PATTERNS as readonly string[]).includes(name));
  console.log(
    `cursor-codec sizes: hole counts up to ${max.toLocaleString('en-US')}, ${entriesPerLedger} entries per ledger, MB = 10^6 bytes`,
  );
  const rows = measureAll(patterns, max, entriesPerLedger, (row) => printTable([format(row)]));
  console.log('');
  printTable(rows.map(format));
  printTargets(rows);
}

function measureAll(patterns: Pattern[], max: number, entriesPerLedger: number, onRow: (row: Row) => void): Row[] {
  const rows: Row[] = [];
  for (const pattern of patterns) {
    for (const holes of HOLE_COUNTS.filter((count) => count <= max)) {
      const before = heapBytes();
      const { state, span } = buildState(pattern, holes, entriesPerLedger);
      const heapMb = (heapBytes() - before) / 1e6;
      const ranges = state.acked.rangeCount();
      const estimateMb = state.acked.memoryBytes() / 1e6;
      for (const variant of VARIANTS) {
        rows.push({ pattern, holes, ranges, span, heapMb, estimateMb, ...measure(variant, state) });
        onRow(rows[rows.length - 1] as Row);
      }
    }
  }
  return rows;
}

/** For `npm run bench`: 1M holes by default (10M with --full), our chosen encoding beside Pulsar's two layouts. */
export async function run(): Promise<BenchReport> {
  const max = full ? 10_000_000 : 1_000_000;
  const patterns: Pattern[] = quick() ? ['alternating', 'random50'] : [...PATTERNS];
  const rows = measureAll(patterns, max, 50_000, () => undefined);
  const comparisons: Comparison[] = [];
  for (const row of rows.filter((r) => r.variant === 'auto' && r.holes >= 1_000_000 && r.bytes !== undefined)) {
    for (const peer of ['pulsar-ranges', 'long-array']) {
      const other = rows.find((r) => r.pattern === row.pattern && r.holes === row.holes && r.variant === peer);
      if (other?.bytes === undefined) continue;
      comparisons.push({
        figure: `cursor state bytes, ${row.holes.toLocaleString('en-US')} ${row.pattern} holes`,
        unit: 'B',
        ours: row.bytes!,
        peer: `Pulsar ${peer === 'pulsar-ranges' ? 'MessageRange list' : 'long-array bitset'}`,
        peerValue: other.bytes,
        higherIsBetter: false,
      });
    }
  }
  return {
    section: 'Ack holes: cursor state size and codec speed',
    setup: `patterns ${patterns.join(', ')}, hole counts up to ${max.toLocaleString('en-US')}, 50 000 entries per ledger; MB = 10^6 bytes`,
    tables: [
      {
        title: 'cursor state per encoding ("auto" is what the writer stores)',
        rows: rows.map((row) => Object.fromEntries(HEADER.map((title, i) => [title, format(row)[i]]))),
      },
    ],
    comparisons,
  };
}

function printTargets(rows: Row[]): void {
  const find = (pattern: string, holes: number, variant: string): Row | undefined =>
    rows.find((row) => row.pattern === pattern && row.holes === holes && row.variant === variant);
  console.log('\ntargets');
  const alternating = find('alternating', 10_000_000, 'auto');
  if (alternating?.bytes !== undefined) {
    console.log(
      `  10M alternating holes, auto: ${(alternating.bytes / 1e6).toFixed(3)} MB (target <= 2.5), decode ${alternating.decodeMs?.toFixed(0)} ms (target < 1000)`,
    );
  }
  const sparse = find('sparse', 100_000, 'auto');
  if (sparse?.bytes !== undefined) {
    console.log(
      `  100M backlog with 0.1% unacked, auto: ${(sparse.bytes / 1e6).toFixed(3)} MB (target <= 0.43), span ${sparse.span.toLocaleString('en-US')}`,
    );
  }
  for (const holes of HOLE_COUNTS) {
    const ranges = find('alternating', holes, 'pulsar-ranges');
    const compact = find('alternating', holes, 'compact');
    const raw = find('alternating', holes, 'compact (no deflate)');
    if (ranges?.bytes === undefined || compact?.bytes === undefined || raw?.bytes === undefined) continue;
    console.log(
      `  alternating ${holes.toLocaleString('en-US')}: pulsar-ranges / compact = ${(ranges.bytes / compact.bytes).toFixed(0)}x, / compact without deflate = ${(ranges.bytes / raw.bytes).toFixed(1)}x (target >= 50x)`,
    );
  }
}

if (require.main === module) main();
