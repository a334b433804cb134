import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { FakeCluster } from '@ledgerline/client/testing';

const ROOT = resolve(__dirname, '../../..');
const TSX = join(ROOT, 'node_modules/.bin/tsx');
const MAIN = join(ROOT, 'apps/cli/src/main.ts');
const TOPIC = 'persistent://acme/orders/payments';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The most one `ledgerline` process may take before it is killed. Starting one
 * through tsx costs about 3 s of CPU, which a machine running another suite
 * beside this one stretches past Jest's default 30 s for a test that starts
 * two; no test here starts more than two, so that is each test's bound.
 */
const PROCESS_BOUND_MS = 60_000;
jest.setTimeout(2 * PROCESS_BOUND_MS);

/** Runs the real `ledgerline` process, feeding `input` to its stdin. */
function ledgerline(args: string[], input = ''): Promise<Run> {
  return new Promise((done) => {
    const child = spawn(TSX, [MAIN, ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), PROCESS_BOUND_MS);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code: code ?? 1, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

describe('ledgerline produce, consume, read, perf and topics stats/unload, run as processes', () => {
  let cluster: FakeCluster;
  let url: string[];

  beforeAll(async () => {
    cluster = await FakeCluster.start();
    cluster.createTopic(TOPIC);
    url = ['--url', cluster.serviceUrl];
  });
  afterAll(() => cluster.close());

  it('produces with -m -n, key and properties, and from stdin lines', async () => {
    const produced = await ledgerline(['produce', TOPIC, '-m', 'hello', '-n', '3', '-k', 'k1', '-p', 'a=b', ...url]);
    expect(produced).toMatchObject({
      code: 0,
      stdout: `produced 3 message(s) to ${TOPIC} at offsets 0..2\n`,
      stderr: '',
    });
    const piped = await ledgerline(['produce', TOPIC, ...url], 'line one\nline two\n');
    expect(piped).toMatchObject({ code: 0, stdout: `produced 2 message(s) to ${TOPIC} at offsets 3..4\n` });
    expect(cluster.storedTexts(TOPIC)).toEqual(['hello', 'hello', 'hello', 'line one', 'line two']);
  });

  it('consumes from the earliest as JSON lines and acknowledges', async () => {
    const consumed = await ledgerline([
      'consume',
      TOPIC,
      '-s',
      'cli',
      '--from',
      'earliest',
      '-n',
      '4',
      '--json',
      ...url,
    ]);
    expect(consumed.code).toBe(0);
    const lines = consumed.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((line) => line['payload'])).toEqual(['hello', 'hello', 'hello', 'line one']);
    expect(lines[0]).toMatchObject({
      key: 'k1',
      properties: { a: 'b' },
      offset: 0,
      messageId: '1:0:0:-1',
      redeliveryCount: 0,
    });
    const rest = await ledgerline(['consume', TOPIC, '-s', 'cli', '-n', '1', ...url]);
    expect(rest).toMatchObject({ code: 0, stdout: 'line two\n' });
  });

  it('reads from an offset and from a time without a subscription', async () => {
    expect(await ledgerline(['read', TOPIC, '--offset', '3', '-n', '2', ...url])).toMatchObject({
      code: 0,
      stdout: 'line one\nline two\n',
    });
    const fromTime = await ledgerline(['read', TOPIC, '--time', '2000-01-01T00:00:00Z', '-n', '1', ...url]);
    expect(fromTime).toMatchObject({ code: 0, stdout: 'hello\n' });
  });

  it('shows topic stats as JSON and unloads a topic', async () => {
    const stats = await ledgerline(['topics', 'stats', TOPIC, ...url]);
    expect(stats.code).toBe(0);
    expect(JSON.parse(stats.stdout)).toMatchObject({ nextOffset: 5, entries: 2 });
    expect(await ledgerline(['topics', 'unload', TOPIC, ...url])).toMatchObject({
      code: 0,
      stdout: `unloaded ${TOPIC}\n`,
    });
    expect(cluster.ownerOf(TOPIC)).toBe(1);
  });

  it('runs perf produce with JSON lines and an HDR log', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ledgerline-perf-'));
    try {
      const histogram = join(dir, 'perf.hlog');
      const run = await ledgerline([
        'perf',
        'produce',
        TOPIC,
        '--duration',
        '2',
        '--rate',
        '500',
        '--json',
        '--histogram',
        histogram,
        ...url,
      ]);
      expect(run.code).toBe(0);
      const reports = run.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const summary = reports[reports.length - 1]!;
      expect(summary).toMatchObject({ type: 'summary', mode: 'produce', errors: 0 });
      expect(summary['messages']).toBeGreaterThan(0);
      expect(reports.some((report) => report['type'] === 'interval')).toBe(true);
      expect(readFileSync(histogram, 'utf8')).toMatch(/^#\[StartTime: /m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs perf e2e and prints a line per second and a summary', async () => {
    const run = await ledgerline(['perf', 'e2e', TOPIC, '--duration', '2', '--rate', '200', '--size', '64', ...url]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^e2e: \d+ msg\/s [\d.]+ MB\/s \| latency ms p50 [\d.]+ p99 [\d.]+ p99\.9 [\d.]+ max [\d.]+$/m,
    );
    expect(run.stdout).toMatch(/^e2e summary: [1-9]\d* msgs in /m);
  });

  it.each([
    [['consume', TOPIC]],
    [['consume', TOPIC, '-s', 'x', '--from', 'yesterday']],
    [['consume', TOPIC, '-s', 'x', '-t', 'Exclusif']],
    [['read', TOPIC]],
    [['read', TOPIC, '--offset', '1', '--time', '2020-01-01']],
    [['produce', TOPIC, '-m', 'x', '-p', 'novalue']],
    [['produce', TOPIC, '-m', 'x', '-n', '0']],
    [['perf', 'bogus', TOPIC]],
    [['perf', 'produce', TOPIC, '--size', 'big']],
  ])('refuses %j with one line on stderr and exit status 2', async (args) => {
    const run = await ledgerline([...args, ...url]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('exits 1 with the service reason for a missing topic, and 3 when nothing listens', async () => {
    const missing = await ledgerline(['produce', 'acme/orders/missing', '-m', 'x', ...url]);
    expect(missing).toMatchObject({ code: 1, stderr: expect.stringMatching(/^error: NOT_FOUND TOPIC_NOT_FOUND: /) });
    const unreachable = await ledgerline(['produce', TOPIC, '-m', 'x', '--url', '127.0.0.1:1']);
    expect(unreachable.code).toBe(3);
  });
});
