import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveControl } from './control.js';
import type { PodRunner } from './pod-runner.js';
import { pods } from './testing/run-pods.js';

/*
 * The `npm run pods` commands that drive a running pod runner, from the
 * command line through its run folder's control socket, against a stand-in
 * runner that records what it was asked (the pod specs drive a real one).
 */
describe('the pod commands', () => {
  let runDir: string;
  let server: Server;
  const asked: string[] = [];

  beforeAll(async () => {
    runDir = mkdtempSync(join(tmpdir(), 'ledgerline-pod-cli-'));
    const record = (line: string) => void asked.push(line);
    const runner = {
      runDir,
      prefix: 'llprtest',
      subnet: '10.213.7',
      status: () => [
        {
          name: 'writer-0',
          owner: 'Deployment/writer',
          ip: '10.213.7.2',
          ready: true,
          terminating: false,
          restarts: 1,
          pids: [],
        },
      ],
      scale: async (name: string, replicas: number) => record(`scale ${name} ${replicas}`),
      deletePod: async (name: string) => (record(`delete-pod ${name}`), ['exited SIGTERM']),
      drain: async (pods: readonly string[], timeoutMs: number) => (
        record(`drain ${timeoutMs} ${pods.join(' ')}`),
        ['evicted']
      ),
      rolloutRestart: async (name: string) => record(`rollout-restart ${name}`),
      partition: async (pod: string, from: readonly string[]) => (
        record(`partition ${pod} ${from.join(' ')}`),
        [1, 2, 3, 4]
      ),
      heal: async () => (record('heal'), 4),
    };
    server = await serveControl(runner as unknown as PodRunner, 'deploy/overlays/dev', async () => undefined);
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(runDir, { recursive: true, force: true });
  });

  /** `npm run pods -- <args>` against the stand-in's run folder. */
  const cluster = (...args: string[]) => pods(...args, '--run-dir', runDir);

  it('carries each command and its arguments to the runner and prints its answer', async () => {
    expect((await cluster('pods')).stdout).toMatch(/^writer-0 +10\.213\.7\.2 +Ready +restarts 1 +Deployment\/writer/);
    expect((await cluster('scale', 'ledgerline-writer-owner', '3')).code).toBe(0);
    expect((await cluster('delete-pod', 'writer-0')).stdout).toBe('exited SIGTERM\n');
    expect((await cluster('drain', 'writer-0', 'writer-1', '--timeout-ms', '9000')).stdout).toBe('evicted\n');
    expect((await cluster('rollout', 'restart', 'ledgerline-metadata')).code).toBe(0);
    expect((await cluster('partition', 'writer-0', '--from', 'redis', 'ledgerline-metadata')).stdout).toBe(
      '4 routes added\n',
    );
    expect((await cluster('heal')).stdout).toBe('4 routes removed\n');
    expect(asked).toEqual([
      'scale ledgerline-writer-owner 3',
      'delete-pod writer-0',
      'drain 9000 writer-0 writer-1',
      'rollout-restart ledgerline-metadata',
      'partition writer-0 redis ledgerline-metadata',
      'heal',
    ]);
  });

  it('refuses a replica count that is not a whole number, before asking the runner', async () => {
    const before = asked.length;
    const refused = await cluster('scale', 'ledgerline-writer-owner', 'many');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('many');
    expect(asked).toHaveLength(before);
  });

  it('says so when no runner answers on the run folder, also to down', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'ledgerline-pod-cli-none-'));
    try {
      for (const command of ['heal', 'down']) {
        const { code, stderr } = await pods(command, '--run-dir', empty);
        expect(code).toBe(1);
        expect(stderr).toMatch(/NO_RUNNER.*npm run pods -- up --from-manifests/);
      }
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
