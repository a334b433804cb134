// Encoding cost of a stored entry (Pulsar's layout: checksum, MessageMetadata,
// payload) per publish, for a 1 KiB single message and a batch of 100, as the
// writer owner encodes every publish request it stores.
// Run: npx tsx bench/message-format-encode.ts [--full]
import { encodeMessageEntry, type EntryInput } from '@ledgerline/message-format';
import { runAlone, sized, type BenchReport } from './bench-report.js';

const ROUNDS = sized({ quick: 50_000, normal: 200_000, full: 1_000_000 });
const payload = new Uint8Array(1024).map((_, i) => (i * 7) & 0xff);

function measure(label: string, input: EntryInput, rounds: number): Record<string, string | number> {
  for (let i = 0; i < 1_000; i++) encodeMessageEntry(input); // warm-up
  const started = process.hrtime.bigint();
  let bytes = 0;
  for (let i = 0; i < rounds; i++) bytes += encodeMessageEntry({ ...input, sequenceId: BigInt(i) }).length;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { entry: label, 'entries/s': Math.round(rounds / seconds), 'us/entry': (seconds * 1e6) / rounds, bytes };
}

export async function run(): Promise<BenchReport> {
  const single: EntryInput = { producerName: 'bench-producer', sequenceId: 0n, publishTimeMs: Date.now(), payload };
  const batch: EntryInput = {
    ...single,
    messages: Array.from({ length: 100 }, (_, i) => ({ payload: payload.subarray(0, 100), key: `key-${i}` })),
  };
  return {
    section: 'Entry encoding (message-format)',
    setup: `${ROUNDS} single 1 KiB entries and ${ROUNDS / 100} batches of 100 keyed 100 B messages`,
    tables: [
      {
        title: 'encodeMessageEntry',
        rows: [measure('1 KiB, one message', single, ROUNDS), measure('batch of 100', batch, ROUNDS / 100)],
      },
    ],
    comparisons: [],
  };
}

runAlone(module, run);
