// CPU to encode one Fetch answer of the fetch bench's shape (entries of 100
// records of 1 KiB, ten of them: what one 1 MiB partition fetch answers), in
// this process: the answer as the gateway writes it now (each entry's record
// batch spliced in, SplicedBytes and encodeResponseChunks) beside the answer
// copied together (the batches concatenated, copied into the encoder's buffer
// and that into a buffer of its own), as it was written before.
//
// Run: npx tsx bench/kafka-fetch-encode.ts [--full]   (also part of `npm run bench`)
import {
  ApiKey,
  apiSpec,
  encodePlainRecordBatch,
  encodeResponse,
  encodeResponseChunks,
  SplicedBytes,
  type Message,
} from '@ledgerline/kafka-protocol';
import { runAlone, sized, type BenchReport } from './bench-report.js';

const ANSWERS = sized({ quick: 300, normal: 1_000, full: 5_000 });
const ROUNDS = 3;
const RECORDS_PER_BATCH = 100;
const BATCHES = 10;
const value = Buffer.alloc(1024, 'x');

function recordBatch(baseOffset: number): Buffer {
  const values = Array.from({ length: RECORDS_PER_BATCH }, () => value);
  return encodePlainRecordBatch(BigInt(baseOffset), values, 1_700_000_000_000n);
}

function answer(records: Buffer | SplicedBytes): Message {
  const end = BigInt(BATCHES * RECORDS_PER_BATCH);
  const partition = {
    partitionIndex: 0,
    errorCode: 0,
    highWatermark: end,
    lastStableOffset: end,
    logStartOffset: -1n,
    abortedTransactions: null,
    preferredReadReplica: -1,
    records,
  };
  return { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: [{ topic: 't', partitions: [partition] }] };
}

/** Microseconds of this process's CPU per call of `encode`, over ANSWERS calls. */
function cpuMicrosPerAnswer(encode: (index: number) => unknown): number {
  const before = process.cpuUsage();
  for (let index = 0; index < ANSWERS; index++) encode(index);
  const used = process.cpuUsage(before);
  return Math.round(((used.user + used.system) / ANSWERS) * 10) / 10;
}

export async function run(): Promise<BenchReport> {
  const fetch = apiSpec(ApiKey.Fetch)!;
  const batches = Array.from({ length: BATCHES }, (_, index) => recordBatch(index * RECORDS_PER_BATCH));
  const answerBytes = encodeResponse(fetch, 11, 0, answer(Buffer.concat(batches))).length;
  const rows = [];
  // Alternated, and the first round is warm-up for both: a copy of fresh memory costs more than one the
  // allocator has handed out before.
  for (let round = 1; round <= ROUNDS; round++) {
    const copied = cpuMicrosPerAnswer((index) => encodeResponse(fetch, 11, index, answer(Buffer.concat(batches))));
    const spliced = cpuMicrosPerAnswer((index) =>
      encodeResponseChunks(fetch, 11, index, answer(new SplicedBytes(batches))),
    );
    rows.push({ round, 'copied together (µs CPU per answer)': copied, 'spliced (µs CPU per answer)': spliced });
  }
  const last = rows.at(-1)!;
  return {
    section: 'Kafka Fetch answer encoding',
    setup:
      `${ANSWERS} Fetch v11 answers of ${BATCHES} record batches of ${RECORDS_PER_BATCH} records of ${value.length} B ` +
      `(${answerBytes} B each) encoded in this process, ${ROUNDS} alternating rounds: the batches copied together ` +
      '(encodeResponse of their concatenation) and spliced (encodeResponseChunks of SplicedBytes, as the gateway answers)',
    tables: [{ title: 'CPU per answer', rows }],
    comparisons: [
      {
        figure: 'encode a 1 MiB Fetch answer (record batches spliced vs copied together)',
        unit: 'µs CPU',
        ours: last['spliced (µs CPU per answer)'],
        peer: 'the same answer copied together (the encoding before)',
        peerValue: last['copied together (µs CPU per answer)'],
        higherIsBetter: false,
      },
    ],
  };
}

runAlone(module, run);
