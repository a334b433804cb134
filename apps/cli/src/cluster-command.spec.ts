import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ChildProcessGroup, readClusterDescription, type ClusterDescription } from '@ledgerline/cluster';
import { eventually } from '@ledgerline/testing';
import { ledgerline } from './testing/run-cli.js';

// `ledgerline cluster up` as a real process (it must own its children and
// answer Ctrl-C), with `cluster status` run in this process against what it
// wrote down.

const ROOT = resolve(__dirname, '../../..');
const MAIN = join(ROOT, 'apps/cli/src/main.ts');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * How long `cluster status` waits here for each process's answer: the
 * default (2 s) is for a person at a terminal; a CI machine running other
 * suites beside this one can take longer to answer a health check.
 */
const STATUS_TIMEOUT = '30000';

describe('ledgerline cluster', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledgerline-cluster-cli-'));
  const stateFile = join(dir, 'cluster.json');
  // Every `cluster up` and every cluster it described, so a test that fails midway leaves nothing running.
  const started: ChildProcessGroup[] = [];
  const described: ClusterDescription[] = [];

  function clusterUp(args: string[]): ChildProcessGroup {
    const up = ChildProcessGroup.spawn(
      'cluster up',
      process.execPath,
      ['--import', 'tsx', MAIN, 'cluster', 'up', ...args],
      {
        cwd: ROOT,
        env: Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('LEDGERLINE_'))),
      },
    );
    started.push(up);
    return up;
  }

  function describedAt(file: string): ClusterDescription {
    const description = readClusterDescription(file);
    described.push(description);
    return description;
  }

  afterAll(async () => {
    for (const up of started) await up.stop('SIGINT', 60_000);
    // Whatever a failed run left behind goes by its pid, never by name.
    for (const pid of described
      .flatMap((description) => [...description.processes, ...description.servers])
      .map((p) => p.pid)) {
      if (alive(pid)) process.kill(-pid, 'SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  }, 90_000);

  it('refuses --redis-url with --redis-cluster, a count out of range and a status timeout of 0 as usage errors', async () => {
    const both = await ledgerline('cluster', 'up', '--redis-url', 'redis://127.0.0.1:1', '--redis-cluster', '3');
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--redis-url or --redis-cluster, not both/);
    const tooMany = await ledgerline('cluster', 'up', '--writers', '99');
    expect(tooMany.code).toBe(2);
    expect(tooMany.stderr).toMatch(/--writers.*from 0 to 16/);
    const noWait = await ledgerline('cluster', 'status', '--timeout', '0');
    expect(noWait.code).toBe(2);
    expect(noWait.stderr).toMatch(/--timeout.*from 1 to 600000/);
  });

  it('says there is no cluster when nothing was started', async () => {
    const status = await ledgerline('cluster', 'status', '--state-file', join(dir, 'none.json'));
    expect(status.code).toBe(1);
    expect(status.stderr).toMatch(/NO_CLUSTER: no local cluster is described at .*none\.json/);
  });

  it('starts servers and services as processes, shows them in cluster status, and stops them all on Ctrl-C', async () => {
    const up = clusterUp([
      '--metadata',
      '1',
      '--writers',
      '2',
      '--readers',
      '0',
      '--collectors',
      '1',
      '--gateways',
      '1',
      '--state-file',
      stateFile,
    ]);
    await up.waitForOutput(/Press Ctrl-C to stop every process/, 180_000);
    expect(up.output).toMatch(/redis: +redis:\/\/127\.0\.0\.1:\d+/);
    expect(up.output).toMatch(/writer-owner-1 +grpc 127\.0\.0\.1:\d+/);
    expect(up.output).toMatch(/kafka-gateway-0 +grpc 127\.0\.0\.1:\d+ .* kafka 127\.0\.0\.1:\d+/);
    expect(up.output).toMatch(/kafka: +echo hello \| kcat -b 127\.0\.0\.1:\d+ -P -t orders/);
    expect(up.output).toMatch(/console: +http:\/\/127\.0\.0\.1:\d+\//);
    const description = describedAt(stateFile);
    expect(description.processes.map((process) => process.role)).toEqual([
      'metadata',
      'writer-owner',
      'writer-owner',
      'garbage-collector',
      'kafka-gateway',
      'console',
    ]);

    const status = await ledgerline('cluster', 'status', '--state-file', stateFile, '--timeout', STATUS_TIMEOUT);
    // The whole answer on failure: which process was not SERVING.
    expect(status).toMatchObject({ code: 0, stderr: '' });
    const lines = status.stdout.trim().split('\n');
    expect(lines[1]).toMatch(/^NAME +ROLE +PID +ADDRESS +PROCESS +HEALTH +OWNED TOPICS$/);
    expect(lines.filter((line) => / running +SERVING /.test(line))).toHaveLength(6);
    expect(lines.filter((line) => /^(redis|nats) .* running +- +-$/.test(line))).toHaveLength(2);

    // One service dies: status says so and fails, the others go on.
    const collector = description.processes.find((process) => process.role === 'garbage-collector')!;
    process.kill(-collector.pid, 'SIGKILL');
    await up.waitForOutput(/garbage-collector-0 exited \(SIGKILL\); the others go on/, 30_000);
    const degraded = await ledgerline('cluster', 'status', '--state-file', stateFile, '--timeout', STATUS_TIMEOUT);
    expect(degraded.code).toBe(1);
    expect(degraded.stdout).toMatch(/garbage-collector-0 +garbage-collector +\d+ +\S+ +gone +UNREACHABLE/);

    up.signal('SIGINT');
    const exit = await up.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(up.output).toMatch(/SIGINT: stopping every service[\s\S]*stopped/);
    const pids = [...description.processes, ...description.servers].map((entry) => entry.pid);
    await eventually(() => pids.every((pid) => !alive(pid)), { description: 'every process of the cluster gone' });
    expect(() => readClusterDescription(stateFile)).toThrow(/no local cluster/);
  }, 240_000);

  it('cluster down stops what a killed cluster up left running, by process group', async () => {
    const downFile = join(dir, 'down.json');
    const up = clusterUp([
      '--metadata',
      '1',
      '--writers',
      '0',
      '--readers',
      '0',
      '--collectors',
      '0',
      '--gateways',
      '0',
      '--consoles',
      '0',
      '--state-file',
      downFile,
    ]);
    await up.waitForOutput(/Press Ctrl-C to stop every process/, 180_000);
    const description = describedAt(downFile);
    // Only the supervisor dies (as with kill -9): what it started lives on in groups of its own.
    process.kill(up.pid, 'SIGKILL');
    await up.exited;
    const pids = [...description.processes, ...description.servers].map((entry) => entry.pid);
    expect(pids.every(alive)).toBe(true);
    const down = await ledgerline('cluster', 'down', '--state-file', downFile);
    expect(down.code).toBe(0);
    expect(down.stdout).toMatch(/cluster up \(pid \d+\) is gone; sent SIGTERM to 3 process group\(s\) it had started/);
    await eventually(() => pids.every((pid) => !alive(pid)), { description: 'every process of the cluster gone' });
  }, 240_000);
});
