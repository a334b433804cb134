// The ack-hole map at many holes: how long building the map a browser draws
// (512 cells) from a cursor's acknowledged ranges takes, at 100,000 and
// 1,000,000 holes. The writer owner builds it where the ranges are
// (GetCursorSummary), so only the map crosses the network;
// bench/managed-ledger-append.ts times it on a recovered cursor, with a page
// of exact ranges (ListAckedRanges), at 1M and 10M holes.
//
//   npx tsx bench/console-ack-map.ts          # 100,000 and 1,000,000 holes
//
// The machine is shared: figures under load are indicative only (the load
// average is printed with them).
import { loadavg } from 'node:os';
import { DEFAULT_ACK_MAP_CELLS } from '@ledgerline/console';
import { buildAckMap, rangesOf } from '@ledgerline/managed-ledger';

const HOLES = [100_000, 1_000_000];
const ROUNDS = 5;

function alternating(holes: number) {
  // One ledger of 2 * holes entries, every other one acknowledged: `holes` ranges and `holes` holes.
  const ledgers = [{ ledgerId: 1, entries: 2 * holes + 1, firstOffset: 0, lastOffset: 2 * holes }];
  const ranges = Array.from({ length: holes }, (_, i) => ({
    ledgerId: 1,
    firstEntryId: 2 * i + 1,
    lastEntryId: 2 * i + 1,
  }));
  return { ledgers, ranges };
}

const rows = HOLES.map((holes) => {
  const { ledgers, ranges } = alternating(holes);
  const times: number[] = [];
  let cells = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const started = process.hrtime.bigint();
    const map = buildAckMap(ledgers, { ledgerId: 1, entryId: -1 }, rangesOf(ranges), DEFAULT_ACK_MAP_CELLS);
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
    cells = map.cells.length;
  }
  times.sort((a, b) => a - b);
  return {
    holes: holes.toLocaleString('en'),
    cells,
    'map ms (median)': times[Math.floor(times.length / 2)]!.toFixed(1),
    'map ms (best)': times[0]!.toFixed(1),
    'JSON bytes of the map': JSON.stringify(
      buildAckMap(ledgers, { ledgerId: 1, entryId: -1 }, rangesOf(ranges), DEFAULT_ACK_MAP_CELLS).cells,
    ).length,
  };
});

console.log(
  `console ack-hole map, ${ROUNDS} rounds each, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.table(rows);
