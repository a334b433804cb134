import { execFile } from 'node:child_process';
import { kafkaStandaloneRun } from './testing/kafka-standalone-run.js';
import { take } from './testing/take-messages.js';

// kcat 1.7 (librdkafka 2.0, Debian's package, installed by .ci/run) against
// standalone's Kafka listener: librdkafka opens with ApiVersions v3 (flexible),
// then uses the highest versions the gateway announces.

const KCAT_TIMEOUT_MS = 20_000;
/** Messages produced with each codec, then read back through kcat and through the SDK. */
const MESSAGES_PER_CODEC = 10_000;

function kcat(args: readonly string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'kcat',
      args,
      { timeout: KCAT_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error !== null) reject(new Error(`kcat ${args.join(' ')} failed: ${error.message}\n${stderr}`));
        else resolve(stdout);
      },
    );
    child.stdin?.end(input ?? '');
  });
}

describe('kcat against standalone', () => {
  const kafka = kafkaStandaloneRun('kcat');

  it('produces with keys and headers, reads back through kcat and the SDK at the same offsets, and lists metadata', async () => {
    await kcat(
      ['-b', kafka.broker, '-P', '-t', 'kcat-orders', '-K', ':', '-H', 'source=kcat'],
      'k1:one\nk2:two\nk3:three\n',
    );
    const consumed = await kcat([
      '-b',
      kafka.broker,
      '-C',
      '-t',
      'kcat-orders',
      '-o',
      'beginning',
      '-e',
      '-f',
      '%o %k %s %h\n',
    ]);
    expect(consumed.trim().split('\n')).toEqual([
      '0 k1 one source=kcat',
      '1 k2 two source=kcat',
      '2 k3 three source=kcat',
    ]);
    const reader = await kafka.client.reader({ topic: 'public/default/kcat-orders', start: { offset: 0 } });
    const read = await take(reader, 3);
    await reader.close();
    expect(
      read.map((message) => [message.offset, message.key, Buffer.from(message.payload).toString(), message.properties]),
    ).toEqual([
      [0n, 'k1', 'one', { source: 'kcat' }],
      [1n, 'k2', 'two', { source: 'kcat' }],
      [2n, 'k3', 'three', { source: 'kcat' }],
    ]);
    const metadata = await kcat(['-b', kafka.broker, '-L', '-t', 'kcat-orders']);
    expect(metadata).toContain('topic "kcat-orders" with 1 partitions');
    expect(metadata).toContain(`broker 1 at ${kafka.broker}`);
  });

  it.each(['gzip', 'snappy', 'lz4', 'zstd'])(
    'produces %s-compressed batches (-z) that read back through kcat and the SDK',
    async (codec) => {
      const topic = `kcat-${codec}`;
      // Repetitive values and a linger so librdkafka sends a few large batches it can shrink (it sends
      // a batch uncompressed when compression would not make it smaller).
      const lines = Array.from(
        { length: MESSAGES_PER_CODEC },
        (_, index) => `k${index}:value-${index}-${'x'.repeat(100)}`,
      );
      await kcat(
        ['-b', kafka.broker, '-P', '-t', topic, '-K', ':', '-z', codec, '-X', 'linger.ms=50'],
        `${lines.join('\n')}\n`,
      );
      const consumed = await kcat(['-b', kafka.broker, '-C', '-t', topic, '-o', 'beginning', '-e', '-f', '%o %k %s\n']);
      expect(consumed.trim().split('\n')).toEqual(lines.map((line, index) => `${index} ${line.replace(':', ' ')}`));
      const reader = await kafka.client.reader({ topic: `public/default/${topic}`, start: { offset: 0 } });
      const read = await take(reader, lines.length);
      await reader.close();
      expect(read.map((message) => `${message.key}:${Buffer.from(message.payload).toString()}`)).toEqual(lines);
      expect(read.at(-1)!.offset).toBe(BigInt(lines.length - 1));
    },
  );

  it('consumes with a group (-G), committing on close, so a second run of the group reads only what is new', async () => {
    // kcat -G with -o would assign that offset itself; auto.offset.reset only applies without a commit.
    const group = ['-b', kafka.broker, '-G', 'kcat-readers', '-X', 'auto.offset.reset=earliest', '-e', '-f', '%o %s\n'];
    await kcat(['-b', kafka.broker, '-P', '-t', 'kcat-group'], 'a\nb\n');
    expect((await kcat([...group, 'kcat-group'])).trim().split('\n')).toEqual(['0 a', '1 b']);
    await kcat(['-b', kafka.broker, '-P', '-t', 'kcat-group'], 'c\n');
    expect((await kcat([...group, 'kcat-group'])).trim().split('\n')).toEqual(['2 c']);
  });
});
