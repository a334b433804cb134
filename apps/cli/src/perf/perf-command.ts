import { randomBytes } from 'node:crypto';
import type { Consumer, LedgerlineClient, Producer } from '@ledgerline/client';
import { unexpectedRejection } from '@ledgerline/errors';
import type { Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { withClient } from '../client-connection.js';
import { integerIn } from '../admin-command.js';
import { PerfRecorder, reportLine, type PerfReport } from './perf-recorder.js';
import { descriptionOf } from '../command-index.js';

/** Sends one producer may have waiting for receipts (pulsar-perf's default maxPendingMessages). */
const MAX_OUTSTANDING_PER_PRODUCER = 1_000;
/** Bytes at the front of an e2e payload that carry its send time. */
const TIMESTAMP_BYTES = 8;

interface PerfOptions {
  rate: number;
  size: number;
  producers: number;
  consumers: number;
  duration: number;
  batchMaxMessages: number;
  batchMaxDelayMs: number;
  subscription?: string;
  json: boolean;
  histogram?: string;
}

type Mode = 'produce' | 'consume' | 'e2e';

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Microseconds on a clock shared by producer and consumer of one process. */
function nowUs(): number {
  return (performance.timeOrigin + performance.now()) * 1000;
}

/**
 * One producer's send loop: paced to `rate` msg/s (0: as fast as receipts
 * allow), at most MAX_OUTSTANDING_PER_PRODUCER sends waiting.
 */
async function produceLoop(
  producer: Producer,
  rate: number,
  size: number,
  stamp: boolean,
  recorder: PerfRecorder | undefined,
  stop: AbortSignal,
): Promise<void> {
  const template = randomBytes(size);
  let outstanding = 0;
  let wake: (() => void) | undefined;
  const startedAt = performance.now();
  let sent = 0;
  while (!stop.aborted) {
    if (rate > 0) {
      const due = startedAt + (sent / rate) * 1000;
      const wait = due - performance.now();
      if (wait > 1) {
        await sleep(wait, stop);
        continue;
      }
    }
    if (outstanding >= MAX_OUTSTANDING_PER_PRODUCER) {
      await new Promise<void>((resolve) => (wake = resolve));
      continue;
    }
    const payload = stamp ? Buffer.from(template) : template;
    if (stamp) payload.writeDoubleBE(nowUs(), 0);
    const started = performance.now();
    outstanding++;
    sent++;
    producer
      .send(payload)
      .then(
        () => recorder?.record((performance.now() - started) * 1000, size),
        () => recorder?.failed(),
      )
      .finally(() => {
        outstanding--;
        const resume = wake;
        wake = undefined;
        resume?.();
      });
    // Let receipts and timers run between bursts of sends.
    if (sent % 256 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  await producer.flush().catch(() => undefined);
}

async function consumeLoop(
  consumer: Consumer,
  stamped: boolean,
  recorder: PerfRecorder,
  stop: AbortSignal,
): Promise<void> {
  stop.addEventListener('abort', () => consumer.close().catch(unexpectedRejection), { once: true });
  for await (const message of consumer) {
    const latencyUs =
      stamped && message.payload.byteLength >= TIMESTAMP_BYTES
        ? nowUs() - Buffer.from(message.payload.buffer, message.payload.byteOffset, TIMESTAMP_BYTES).readDoubleBE(0)
        : (Date.now() - message.publishTime) * 1000;
    recorder.record(latencyUs, message.payload.byteLength);
    // Acks still in flight when the run stops fail with CONSUMER_CLOSED: not a failure of the run.
    consumer.ack(message).catch(() => {
      if (!stop.aborted) recorder.failed();
    });
  }
}

async function runPerf(
  client: LedgerlineClient,
  io: CliIo,
  mode: Mode,
  topic: string,
  options: PerfOptions,
  interrupted: AbortSignal,
) {
  const stop = new AbortController();
  interrupted.addEventListener('abort', () => stop.abort(), { once: true });
  const recorder = new PerfRecorder(mode, options.histogram);
  const print = (report: PerfReport): void => io.out(options.json ? JSON.stringify(report) : reportLine(report));
  const subscription = options.subscription ?? `perf-${randomBytes(4).toString('hex')}`;
  const consumers =
    mode === 'produce'
      ? []
      : await Promise.all(
          Array.from({ length: options.consumers }, () =>
            client.subscribe({
              topic,
              subscription,
              type: options.consumers > 1 ? 'Shared' : 'Exclusive',
              receiverQueueSize: 1000,
            }),
          ),
        );
  const batching =
    options.batchMaxMessages === 0
      ? false
      : { maxMessages: options.batchMaxMessages, maxDelayMs: options.batchMaxDelayMs };
  const producers =
    mode === 'consume'
      ? []
      : await Promise.all(
          Array.from({ length: options.producers }, () =>
            client.producer({ topic, batching, maxPendingMessages: MAX_OUTSTANDING_PER_PRODUCER }),
          ),
        );
  const ticker = setInterval(() => print(recorder.tick()), 1000);
  if (options.duration > 0) setTimeout(() => stop.abort(), options.duration * 1000).unref();
  const perProducerRate = options.rate / Math.max(1, producers.length);
  const loops = [
    ...producers.map((producer) =>
      produceLoop(
        producer,
        perProducerRate,
        options.size,
        mode === 'e2e',
        mode === 'produce' ? recorder : undefined,
        stop.signal,
      ),
    ),
    ...consumers.map((consumer) => consumeLoop(consumer, mode === 'e2e', recorder, stop.signal)),
  ];
  try {
    await Promise.all(loops);
  } finally {
    clearInterval(ticker);
  }
  await Promise.all(producers.map((producer) => producer.close().catch(() => undefined)));
  print(recorder.summary());
}

/** `ledgerline perf produce|consume|e2e <topic>`: throughput and latency, like pulsar-perf and `nats bench`. */
export function registerPerfCommand(program: Command, io: CliIo): void {
  program
    .command('perf <mode> <topic>')
    .description(descriptionOf('perf'))
    .option(
      '--rate <msg/s>',
      'messages per second over all producers (0: as fast as possible)',
      integerIn(0, 10_000_000),
      0,
    )
    .option('--size <bytes>', 'message size', integerIn(TIMESTAMP_BYTES, 4 * 1024 * 1024), 1024)
    .option('--producers <n>', 'producers', integerIn(1, 1000), 1)
    .option('--consumers <n>', 'consumers (Shared when more than one)', integerIn(1, 1000), 1)
    .option('--duration <s>', 'seconds to run (0: until interrupted)', integerIn(0, 86_400), 10)
    .option('--batch-max-messages <n>', 'batching limit (0: batching off)', integerIn(0, 10_000), 1000)
    .option('--batch-max-delay-ms <ms>', 'batching delay', integerIn(0, 10_000), 1)
    .option('--subscription <name>', 'subscription for consume and e2e (default: a new one)')
    .option('--json', 'print JSON lines instead of text', false)
    .option('--histogram <file>', 'write every interval histogram to an HDR log file')
    .action(async (mode: string, topic: string, options: PerfOptions, command: Command) => {
      if (mode !== 'produce' && mode !== 'consume' && mode !== 'e2e') {
        command.error(`error: unknown perf mode ${JSON.stringify(mode)}: use produce, consume or e2e`, {
          code: 'ledgerline.usage',
        });
      }
      await withClient(io, command, (client, signal) => runPerf(client, io, mode as Mode, topic, options, signal));
    });
}
