// A topic read from offset 0 to its last message, timed, by kcat through the
// Kafka gateway and by the SDK's reader: what the Kafka fetch and catch-up
// benches set beside each other.
import { spawn } from 'node:child_process';
import type { LedgerlineClient } from '@ledgerline/client';
import { throughput, within, type ThroughputRow } from './baselines.js';

/** The topic (its Kafka name, in public/default), how many messages of what size it holds, and the bound on the read. */
export interface ReadFromStart {
  topic: string;
  messages: number;
  messageBytes: number;
  waitMs: number;
}

/**
 * kcat -C from the beginning until it has printed every message (`-c`, the
 * end the SDK reader's row stops at; `-e` too, so a short topic still ends
 * it), its lines counted as they come (never held), timed from its start;
 * `format` is kcat's -f (default: each message's value), `config` librdkafka
 * properties given with -X. With `-e` alone kcat learns it reached the end
 * from one more Fetch, which a broker (a Kafka broker as well as the gateway)
 * answers only after fetch.wait.max.ms (500 ms) since no record comes: that
 * wait was most of a read of 10,000 records of 1 KiB.
 * A string says why the row has no figure.
 */
export function kcatReadRow(
  broker: string,
  read: ReadFromStart,
  label: string,
  format?: string,
  config: Record<string, string | number> = {},
): Promise<ThroughputRow | string> {
  const args = ['-b', broker, '-C', '-t', read.topic, '-o', 'beginning', '-c', String(read.messages), '-e', '-q'];
  if (format !== undefined) args.push('-f', format);
  for (const [name, value] of Object.entries(config)) args.push('-X', `${name}=${value}`);
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    const child = spawn('kcat', args, { stdio: ['ignore', 'pipe', 'ignore'], timeout: read.waitMs });
    let lines = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
    });
    child.once('error', (error) => resolve(`kcat did not start: ${error.message}`));
    child.once('close', (code, signal) => {
      if (code !== 0 || lines !== read.messages)
        resolve(`kcat ended with ${signal ?? `code ${code}`} after ${lines} lines`);
      else resolve(throughput(label, read.messages, read.messageBytes, started));
    });
  });
}

/** The SDK's reader from offset 0 of the same topic, until it has every message. */
export async function sdkReadRow(client: LedgerlineClient, read: ReadFromStart): Promise<ThroughputRow> {
  const started = process.hrtime.bigint();
  const reader = await client.reader({ topic: `public/default/${read.topic}`, start: { offset: 0 } });
  let received = 0;
  const reading = (async () => {
    for await (const _message of reader) if (++received === read.messages) return process.hrtime.bigint();
    throw new Error(`the SDK reader ended after ${received} of ${read.messages} messages`);
  })();
  try {
    const finished = await within(reading, read.waitMs, `the SDK reader to read ${read.messages} messages`);
    const label = 'SDK reader from offset 0 (the same standalone)';
    return throughput(label, read.messages, read.messageBytes, started, finished);
  } finally {
    await reader.close();
  }
}
