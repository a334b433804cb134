import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { checkHealth, tcpConnects } from '@ledgerline/cluster';
import { LedgerlineError } from '@ledgerline/errors';
import type { Container, PortRef, Probe } from './manifests.js';
import { PodRunnerReason } from './reasons.js';

/** The container port a probe or Service names, by number or by the container's port name. */
export function resolvePort(container: Container, port: PortRef): number {
  if (typeof port === 'number') return port;
  if (/^\d+$/.test(port)) return Number(port);
  const named = container.ports?.find((candidate) => candidate.name === port);
  if (named === undefined) {
    throw new LedgerlineError(
      'FAILED_PRECONDITION',
      PodRunnerReason.BAD_MANIFEST,
      `container ${container.name} has no port named ${port}`,
    );
  }
  return named.containerPort;
}

/** Where a probe runs: the pod's address (the kubelet probes from the node) and its namespace for exec. */
export interface ProbeTarget {
  podIP: string;
  netns: string;
  container: Container;
  env: Readonly<Record<string, string>>;
}

/** An HTTP GET answered with a status from 200 to 399, as the kubelet counts it. */
function httpAnswers(host: string, port: number, path: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const call = request({ host, port, path, method: 'GET', timeout: timeoutMs }, (response) => {
      response.resume();
      const status = response.statusCode ?? 0;
      resolve(status >= 200 && status < 400);
    });
    call.once('timeout', () => call.destroy(new Error('timeout')));
    call.once('error', () => resolve(false));
    call.end();
  });
}

/** An exec probe: the command inside the pod's network namespace, exit status 0 within the timeout. */
function execSucceeds(target: ProbeTarget, command: string[], timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn('ip', ['netns', 'exec', target.netns, ...command], {
      stdio: 'ignore',
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...target.env },
      detached: true,
    });
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }, timeoutMs);
    child.once('error', () => resolve(false));
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code === 0);
    });
  });
}

/** One run of `probe` against the pod: true when it passed within its timeout. */
export async function runProbe(probe: Probe, target: ProbeTarget, timeoutMs: number): Promise<boolean> {
  const { podIP, container } = target;
  if (probe.grpc !== undefined) {
    return (await checkHealth(`${podIP}:${probe.grpc.port}`, timeoutMs)) === 'SERVING';
  }
  if (probe.httpGet !== undefined) {
    const port = resolvePort(container, probe.httpGet.port);
    return httpAnswers(podIP, port, probe.httpGet.path ?? '/', timeoutMs);
  }
  if (probe.tcpSocket !== undefined) return tcpConnects(podIP, resolvePort(container, probe.tcpSocket.port), timeoutMs);
  if (probe.exec !== undefined) return execSucceeds(target, probe.exec.command, timeoutMs);
  throw new LedgerlineError(
    'FAILED_PRECONDITION',
    PodRunnerReason.BAD_MANIFEST,
    `container ${container.name} has a probe with no grpc, httpGet, tcpSocket or exec handler`,
  );
}
