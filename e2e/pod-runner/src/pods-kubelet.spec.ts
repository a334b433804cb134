import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { findRepositoryRoot } from '@ledgerline/cluster';
import { linksWithPrefix, namespacesWithPrefix } from './index.js';
import { PodRunner } from './pod-runner.js';

/*
 * The kubelet's rules on real pods, with small manifests of our own: a
 * failing liveness probe restarts the container, a pod whose readiness probe
 * fails is not behind its Service while a ready one is, and deletion runs
 * preStop, then SIGTERM, then SIGKILL when the grace period ends.
 */

const root = findRepositoryRoot(__dirname);
const execFileAsync = promisify(execFile);
/** Where the preStop hooks note when they ran (ms since the epoch, one line per run). */
const marks = mkdtempSync(join(tmpdir(), 'ledgerline-kubelet-'));
const mark = (name: string) => join(marks, name);
const markTimes = (name: string): number[] => readFileSync(mark(name), 'utf8').trim().split('\n').map(Number);

const deployment = (name: string, container: string): string => `
apiVersion: apps/v1
kind: Deployment
metadata: { name: ${name} }
spec:
  replicas: 1
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata: { labels: { app: ${name} } }
    spec:
      terminationGracePeriodSeconds: 3
      containers:
${container}
---
apiVersion: v1
kind: Service
metadata: { name: ${name} }
spec:
  selector: { app: ${name} }
  ports: [{ port: 6379 }]
---`;

const YAML = [
  deployment(
    'ready',
    `        - name: redis
          image: redis:7.2.5
          args: ['--appendonly', 'no', '--save', '']
          readinessProbe: { tcpSocket: { port: 6379 }, periodSeconds: 1 }`,
  ),
  deployment(
    'unready',
    `        - name: redis
          image: redis:7.2.5
          args: ['--appendonly', 'no', '--save', '']
          readinessProbe: { exec: { command: ['false'] }, periodSeconds: 1 }`,
  ),
  deployment(
    'dead-port',
    `        - name: redis
          image: redis:7.2.5
          args: ['--appendonly', 'no', '--save', '']
          livenessProbe: { tcpSocket: { port: 6390 }, periodSeconds: 1, failureThreshold: 2 }
          lifecycle: { preStop: { exec: { command: ['sh', '-c', 'date +%s%3N >> ${mark('dead-port')}'] } } }`,
  ),
  deployment(
    'stubborn',
    `        - name: node
          image: ledgerline:0.1.0
          command: ['node', '-e', "process.on('SIGTERM', () => console.log('SIGTERM ignored at', Date.now())); setInterval(() => {}, 1000)"]
          lifecycle: { preStop: { exec: { command: ['sh', '-c', 'date +%s%3N >> ${mark('stubborn')}; sleep 1'] } } }`,
  ),
].join('\n');

describe('the kubelet rules on pods', () => {
  let runner: PodRunner | undefined;

  afterAll(async () => {
    await runner?.down();
    rmSync(marks, { recursive: true, force: true });
  }, 120_000);

  it('restarts on liveness failure, keeps an unready pod out of its Service, and kills at the grace period', async () => {
    runner = await PodRunner.up({ yaml: YAML, root, waitForReady: false });
    const only = (name: string) => runner!.podsOf(name)[0]!;
    const [ready, unready, deadPort, stubborn] = ['ready', 'unready', 'dead-port', 'stubborn'].map(only);
    expect(await runner.waitUntil(() => ready!.ready && deadPort!.restarts >= 1, 30_000)).toBe(true);
    // A container killed for its liveness probe runs its preStop hook first, as the kubelet does.
    expect(markTimes('dead-port').length).toBeGreaterThanOrEqual(1);
    // Through each Service's cluster IP: the ready pod answers, the Service of the unready one has no endpoint.
    // Not spawnSync: the proxies run in this process, so its event loop must stay free while redis-cli waits.
    const ping = async (service: string): Promise<string> => {
      const args = ['netns', 'exec', stubborn!.plan.netns, 'redis-cli', '-h', service, 'ping'];
      const { stdout } = await execFileAsync('ip', args, { timeout: 10_000 }).catch(() => ({ stdout: '' }));
      return stdout.trim();
    };
    expect(await ping('ready')).toBe('PONG');
    expect(unready!.ready).toBe(false);
    expect(await ping('unready')).not.toBe('PONG');

    const deletedAtMs = Date.now();
    const outcomes = await runner.deletePod(stubborn!.name);
    const tookMs = Date.now() - deletedAtMs;
    expect(outcomes).toEqual(['killed at the grace period (SIGKILL)']);
    // preStop ran first, and SIGTERM came only once it ended (it sleeps 1 s after noting the time).
    const sigtermAtMs = Number(/SIGTERM ignored at (\d+)/.exec(stubborn!.containers[0]!.output)?.[1]);
    const [preStopAtMs] = markTimes('stubborn');
    expect(sigtermAtMs - preStopAtMs!).toBeGreaterThanOrEqual(900);
    // preStop (1 s) and the ignored SIGTERM both fit in the 3 s grace period, which ends in the SIGKILL: the
    // manifest's 3 s, not the 30 s default (the upper bound is far from both, for a busy machine).
    expect(tookMs).toBeGreaterThanOrEqual(2_900);
    expect(tookMs).toBeLessThan(15_000);

    const prefix = runner.prefix;
    await runner.down();
    runner = undefined;
    expect([...namespacesWithPrefix(prefix), ...linksWithPrefix(prefix)]).toEqual([]);
  }, 120_000);
});
