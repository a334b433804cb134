import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ledgerline } from './testing/run-cli.js';
import type { RunningStandalone } from './standalone.js';
import { startTestStandalone } from './testing/test-standalone.js';

/*
 * The command flows run in this process (runCli with its output captured)
 * against a standalone started in this process: a `tsx` process costs seconds
 * of CPU to start, and a dozen of them per test made this file fail whenever
 * the machine was busy. What only a real process shows (main.ts wiring: exit
 * status, stdout and stderr, signals, a port clash) is checked once below,
 * with node --import tsx (the tsx wrapper would start a second node process).
 */

const ROOT = resolve(__dirname, '../../..');
const MAIN = join(ROOT, 'apps/cli/src/main.ts');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

// The CLI must not pick up a cluster's settings from the environment the tests run in.
const ENV = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !/^LEDGERLINE_(REDIS|NATS)_URL$/.test(key)),
);

/** Runs `ledgerline` as its own process. Bounded by the test's timeout; the process is killed if the test ends first. */
function ledgerlineProcess(...args: string[]): Promise<Run> {
  return new Promise((done) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', MAIN, ...args],
      { cwd: ROOT, env: ENV },
      (error, stdout, stderr) => {
        running.delete(child);
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        done({ code, stdout, stderr });
      },
    );
    running.add(child);
  });
}

/** Processes a test started and has not seen exit; afterAll kills what a failed test left. */
const running = new Set<ChildProcess>();

async function killAll(): Promise<void> {
  await Promise.all(
    [...running].map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGKILL');
      await exited;
    }),
  );
  running.clear();
}

/** Starts `ledgerline standalone` as a process on a free port; resolves with its address once it says where it listens. */
function startStandaloneProcess(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      MAIN,
      'standalone',
      '--data-dir',
      dataDir,
      '--grpc-host',
      '127.0.0.1',
      '--grpc-port',
      '0',
      '--read-only-grpc-port',
      '0',
      '--metrics-port',
      '0',
      // Never the default 8080 in a test: another standalone on the machine may hold it.
      '--console-port',
      '0',
      '--log-level',
      'warn',
    ],
    { cwd: ROOT, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  running.add(child);
  child.once('exit', () => running.delete(child));
  // No timer of its own: the wait ends when the process says where it listens or exits, and the hook's timeout bounds it.
  return new Promise((ready, fail) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on ([\w.]+:\d+)/.exec(output);
      if (match !== null) ready({ child, url: match[1]! });
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => fail(new Error(`standalone exited with ${code}: ${output}`)));
  });
}

describe('the ledgerline CLI against a running standalone', () => {
  let dir: string;
  let standalone: RunningStandalone | undefined;
  let url: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-cli-'));
    standalone = await startTestStandalone(join(dir, 'data'), 'warn');
    url = `127.0.0.1:${standalone.grpcPort}`;
  });
  afterAll(async () => {
    await standalone?.shutdown('tests done');
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates a tenant, a bucketed namespace and many topics, then lists and counts them', async () => {
    expect(await ledgerline('tenants', 'create', 'acme', '--url', url)).toMatchObject({
      code: 0,
      stdout: 'created tenant acme\n',
    });
    const got = await ledgerline('tenants', 'get', 'acme', '--url', url);
    expect(got.code).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ name: 'acme', adminRoles: [] });
    expect(JSON.parse(got.stdout).createdAtMs).toBeGreaterThan(0);
    const missing = await ledgerline('tenants', 'get', 'nobody', '--url', url);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: NOT_FOUND TENANT_NOT_FOUND: tenant nobody does not exist/);
    const namespace = await ledgerline(
      'namespaces',
      'create',
      'acme/orders',
      '--topic-buckets',
      '16',
      '--max-topics',
      '40',
      '--url',
      url,
    );
    expect(namespace).toMatchObject({ code: 0, stdout: 'created namespace acme/orders with 16 topic bucket(s)\n' });
    const bulk = await ledgerline(
      'topics',
      'create-many',
      'acme/orders',
      '--count',
      '50',
      '--batch-size',
      '8',
      '--url',
      url,
    );
    expect(bulk.code).toBe(1);
    expect(bulk.stdout).toMatch(/^created 40, already existed 0, failed 10 /);
    expect(bulk.stderr).toContain('error: 10 topic(s) failed with TOO_MANY_TOPICS');
    const listed = await ledgerline('topics', 'list', 'acme/orders', '--page-size', '7', '--url', url);
    expect(listed.code).toBe(0);
    expect(listed.stdout.trim().split('\n')).toEqual(
      Array.from({ length: 40 }, (_, index) => `persistent://acme/orders/topic-${String(index).padStart(2, '0')}`),
    );
    expect(await ledgerline('topics', 'count', 'acme/orders', '--url', url)).toMatchObject({ code: 0, stdout: '40\n' });
  });

  it('prints the status code and reason of a refusal and exits non-zero', async () => {
    const immutable = await ledgerline('namespaces', 'update', 'acme/orders', '--topic-buckets', '4', '--url', url);
    expect(immutable.code).toBe(1);
    expect(immutable.stderr).toMatch(/^error: FAILED_PRECONDITION BUCKETS_IMMUTABLE: /);
    const badName = await ledgerline('topics', 'create', 'persistent://acme/orders/', '--url', url);
    expect(badName.code).toBe(1);
    expect(badName.stderr).toMatch(/^error: INVALID_ARGUMENT INVALID_TOPIC_NAME: /);
    const unreachable = await ledgerline('tenants', 'list', '--url', '127.0.0.1:1');
    expect(unreachable.code).toBe(3);
    expect(unreachable.stderr).toMatch(/^error: UNAVAILABLE [^\n]*\n$/);
    const mistake = await ledgerline('topics', 'create', 'acme/orders/x', '--partitions', 'many', '--url', url);
    expect(mistake).toMatchObject({ code: 2, stdout: '' });
    expect(mistake.stderr).toMatch(/^error: option '--partitions <n>' argument 'many' is invalid[^\n]*\n$/);
  });

  it('grows a partitioned topic, checks a grow without making it, and refuses shrinking with its reason', async () => {
    await ledgerline('tenants', 'create', 'growers', '--url', url);
    await ledgerline('namespaces', 'create', 'growers/ns', '--url', url);
    await ledgerline('topics', 'create', 'growers/ns/orders', '--partitions', '2', '--url', url);
    const grow = (...args: string[]) =>
      ledgerline('topics', 'update-partitioned-topic', 'growers/ns/orders', ...args, '--url', url);
    expect(await grow('--partitions', '5', '--validate-only')).toMatchObject({
      code: 0,
      stdout: 'would update persistent://growers/ns/orders to 5 partitions\n',
    });
    expect(await ledgerline('topics', 'count', 'growers/ns', '--url', url)).toMatchObject({ stdout: '2\n' });
    expect(await grow('--partitions', '4')).toMatchObject({
      code: 0,
      stdout: 'updated persistent://growers/ns/orders to 4 partitions\n',
    });
    expect(await ledgerline('topics', 'count', 'growers/ns', '--url', url)).toMatchObject({ stdout: '4\n' });
    const shrink = await grow('--partitions', '3');
    expect(shrink.code).toBe(1);
    expect(shrink.stderr).toMatch(/^error: FAILED_PRECONDITION PARTITION_COUNT_NOT_INCREASED: /);
    expect((await grow('--partitions', '0')).code).toBe(2);
  });

  it('sets allowAutoTopicCreation on create and update, shows it, and a lookup then creates an absent topic', async () => {
    const policy = async (namespace: string) => {
      const got = await ledgerline('namespaces', 'get', namespace, '--url', url);
      expect(got.code).toBe(0);
      return (JSON.parse(got.stdout) as { policies: { allowAutoTopicCreation?: boolean } }).policies
        .allowAutoTopicCreation;
    };
    expect(await policy('acme/orders')).toBe(false);
    const created = await ledgerline(
      'namespaces',
      'create',
      'acme/auto',
      '--allow-auto-topic-creation',
      'true',
      '--url',
      url,
    );
    expect(created).toMatchObject({ code: 0, stdout: 'created namespace acme/auto with 1 topic bucket(s)\n' });
    expect(await policy('acme/auto')).toBe(true);
    expect(await ledgerline('topics', 'lookup', 'acme/auto/fresh', '--url', url)).toMatchObject({ code: 0 });
    expect(await ledgerline('topics', 'list', 'acme/auto', '--url', url)).toMatchObject({
      code: 0,
      stdout: 'persistent://acme/auto/fresh\n',
    });
    const updated = await ledgerline(
      'namespaces',
      'update',
      'acme/auto',
      '--allow-auto-topic-creation',
      'false',
      '--url',
      url,
    );
    expect(updated.code).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({ policies: { allowAutoTopicCreation: false } });
    const refused = await ledgerline('topics', 'lookup', 'acme/auto/typo', '--url', url);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: NOT_FOUND TOPIC_NOT_FOUND: /);
    const mistake = await ledgerline(
      'namespaces',
      'update',
      'acme/auto',
      '--allow-auto-topic-creation',
      'yes',
      '--url',
      url,
    );
    expect(mistake).toMatchObject({ code: 2, stdout: '' });
    expect(mistake.stderr).toContain('expected true or false');
    expect(await policy('acme/auto')).toBe(false);
  });

  it('reports and drives the garbage collector standalone hosts', async () => {
    const status = await ledgerline('gc', 'status', '--url', url);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ instanceId: 'standalone', members: 1 });
    const trigger = await ledgerline('gc', 'trigger', '--sweep-orphans', '--url', url);
    expect(trigger.code).toBe(0);
    expect(JSON.parse(trigger.stdout)).toMatchObject({ ledgersDeleted: 0, failures: 0 });
    expect(await ledgerline('gc', 'pending', '--url', url)).toMatchObject({ code: 0, stdout: '' });
    const badPage = await ledgerline('gc', 'pending', '--page-size', '0', '--url', url);
    expect(badPage).toMatchObject({ code: 2, stdout: '' });
    const badToken = await ledgerline('gc', 'pending', '--page-token', 'x', '--url', url);
    expect(badToken.code).toBe(1);
    expect(badToken.stderr).toMatch(/^error: INVALID_ARGUMENT BAD_PAGE_TOKEN: /);
  });

  it('sets a writer namespace and creates topics from a file', async () => {
    const file = join(dir, 'names.txt');
    writeFileSync(file, '# topics to load\nalpha\nbeta\nacme/readers-src/gamma\n');
    await ledgerline('namespaces', 'create', 'acme/readers-src', '--url', url);
    await ledgerline('namespaces', 'create', 'acme/readers', '--owner-group', 'readers', '--url', url);
    const fromFile = await ledgerline('topics', 'create-many', 'acme/readers-src', '--from-file', file, '--url', url);
    expect(fromFile).toMatchObject({ code: 0 });
    expect(fromFile.stdout).toMatch(/^created 3, already existed 0, failed 0 /);
    const set = await ledgerline(
      'namespaces',
      'set-writer-namespace',
      'acme/readers',
      'acme/readers-src',
      '--url',
      url,
    );
    expect(set).toMatchObject({ code: 0, stdout: 'acme/readers now mirrors acme/readers-src (read-only)\n' });
    // Standalone hosts a read-only owner in group `readers`: the lookup through that group is redirected to it.
    const lookup = await ledgerline('topics', 'lookup', 'acme/readers-src/alpha', '--group', 'readers', '--url', url);
    expect(lookup).toMatchObject({ code: 0 });
    expect(lookup.stdout).toContain(`address: localhost:${standalone!.readOnly.port}\n`);
    expect(lookup.stdout).toContain('role: readonly\n');
    expect(lookup.stdout).toContain('redirect topic: persistent://acme/readers/alpha\n');
  });

  it('consumes a writer topic through the read-only group (PIP-63) and shows the redirect', async () => {
    const topic = 'acme/readers-src/beta';
    const produced = await ledgerline('produce', topic, '-m', 'hello', '-n', '3', '--url', url);
    expect(produced).toMatchObject({ code: 0 });
    const consumed = await ledgerline(
      ...['consume', topic, '-s', 'read-side', '--from', 'earliest', '-n', '3', '--group', 'readers', '--url', url],
    );
    expect(consumed).toMatchObject({ code: 0, stdout: 'hello\nhello\nhello\n' });
    expect(consumed.stderr).toContain(
      `through group readers: read-only owner localhost:${standalone!.readOnly.port} (redirected to persistent://acme/readers/beta)`,
    );
    // The subscription's cursor is on the writer owner: acks made on the read side are there.
    const stats = await ledgerline('topics', 'stats', topic, '--url', url);
    expect(stats.stdout).toContain('read-side');
  });
});

describe('the ledgerline command as a process', () => {
  let dir: string;
  let child: ChildProcess;
  let url: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-cli-process-'));
    ({ child, url } = await startStandaloneProcess(join(dir, 'data')));
  });
  afterAll(async () => {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers on stdout with status 0', async () => {
    expect(await ledgerlineProcess('tenants', 'create', 'acme', '--url', url)).toEqual({
      code: 0,
      stdout: 'created tenant acme\n',
      stderr: '',
    });
  });

  it('reports a refusal on one stderr line with status 1', async () => {
    const refused = await ledgerlineProcess('tenants', 'create', 'acme', '--url', url);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toMatch(/^error: ALREADY_EXISTS [A-Z_]+: [^\n]*\n$/);
  });

  it('refuses to start a second standalone on a taken port, on one line', async () => {
    const port = url.slice(url.lastIndexOf(':') + 1);
    const clash = await ledgerlineProcess(
      'standalone',
      '--data-dir',
      join(dir, 'other'),
      '--grpc-port',
      port,
      '--read-only-grpc-port',
      '0',
      '--metrics-port',
      '0',
    );
    expect(clash.code).toBe(1);
    expect(clash.stderr).toMatch(/^error: [A-Z_]+ [A-Z_]+: [^\n]*\n$/);
  });

  it('fails on one line with status 2 when a cluster service has no settings', async () => {
    const unconfigured = await ledgerlineProcess('metadata', '--grpc-port', '0');
    expect(unconfigured.code).toBe(2);
    expect(unconfigured.stderr).toMatch(
      /^error: INVALID_ARGUMENT INVALID_CONFIG: invalid configuration: redisUrl \(LEDGERLINE_REDIS_URL or --redis-url\)[^\n]*\n$/,
    );
  });

  it('stops serving on SIGTERM', async () => {
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
