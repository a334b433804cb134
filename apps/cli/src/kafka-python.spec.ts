import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { kafkaStandaloneRun } from './testing/kafka-standalone-run.js';
import { take } from './testing/take-messages.js';

// kafka-python 2.0.2 (Debian's python3-kafka, installed by .ci/run): a Kafka
// client of its own in pure Python, neither librdkafka (kcat) nor kafkajs. It
// picks its API versions by probing ApiVersions. Debian's interpreter, not
// whichever python3 comes first on PATH: the package is installed for it.

const PYTHON = '/usr/bin/python3';
const SCRIPT = join(__dirname, 'testing', 'kafka-python-client.py');
const RUN_TIMEOUT_MS = 60_000;

interface PythonRecord {
  offset: number;
  key: string | null;
  value: string | null;
  headers: Record<string, string | null>;
  timestamp: number;
}

function python(args: readonly string[]): Promise<Record<string, unknown>[]> {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, [SCRIPT, ...args], { timeout: RUN_TIMEOUT_MS }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`kafka-python ${args.join(' ')} failed: ${error.message}\n${stderr}`));
      else
        resolve(
          stdout
            .split('\n')
            .filter((line) => line !== '')
            .map((line) => JSON.parse(line) as Record<string, unknown>),
        );
    });
  });
}

describe('kafka-python against standalone', () => {
  const kafka = kafkaStandaloneRun('kafka-python');

  it('produces gzip batches with keys and headers that read back through a group and the SDK at the offsets it was told', async () => {
    const count = 1_000;
    const produced = await python(['produce', kafka.broker, 'py-orders', String(count), 'gzip']);
    expect(produced.map((receipt) => receipt['offset'])).toEqual(Array.from({ length: count }, (_, i) => i));
    const consumed = (await python([
      'consume',
      kafka.broker,
      'py-orders',
      'py-readers',
      String(count),
    ])) as unknown as PythonRecord[];
    expect(consumed.map((record) => [record.offset, record.key, record.value, record.headers])).toEqual(
      Array.from({ length: count }, (_, i) => [i, `k${i}`, `v${i}`, { src: 'python' }]),
    );
    const reader = await kafka.client.reader({ topic: 'public/default/py-orders', start: { offset: 0 } });
    const read = await take(reader, count);
    await reader.close();
    expect(
      read.map((message) => [message.offset, message.key, Buffer.from(message.payload).toString(), message.properties]),
    ).toEqual(Array.from({ length: count }, (_, i) => [BigInt(i), `k${i}`, `v${i}`, { src: 'python' }]));
  });

  it("resumes a group right after its commit, reading what the SDK published with the SDK's offsets", async () => {
    const topic = 'py-resume';
    await python(['produce', kafka.broker, topic, '3', 'none']);
    const first = (await python(['consume', kafka.broker, topic, 'py-group', '3'])) as unknown as PythonRecord[];
    expect(first.map((record) => record.offset)).toEqual([0, 1, 2]);
    const producer = await kafka.client.producer({ topic: `public/default/${topic}` });
    const receipts = [];
    for (const value of ['sdk-a', 'sdk-b']) receipts.push(await producer.send(value, { key: value }));
    await producer.close();
    const second = (await python(['consume', kafka.broker, topic, 'py-group', '2'])) as unknown as PythonRecord[];
    expect(second.map((record) => [record.offset, record.key, record.value])).toEqual([
      [Number(receipts[0]!.offset), 'sdk-a', 'sdk-a'],
      [Number(receipts[1]!.offset), 'sdk-b', 'sdk-b'],
    ]);
    expect(second.map((record) => record.offset)).toEqual([3, 4]);
  });

  it('finds offsets by time (ListOffsets): the first message at or after it, none past the end', async () => {
    const topic = 'py-times';
    const before = Date.now() - 60_000;
    await python(['produce', kafka.broker, topic, '5', 'none']);
    expect(await python(['offset-for-time', kafka.broker, topic, String(before)])).toEqual([{ offset: 0 }]);
    expect(await python(['offset-for-time', kafka.broker, topic, String(Date.now() + 3_600_000)])).toEqual([
      { offset: null },
    ]);
  });
});
