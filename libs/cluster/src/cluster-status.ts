import { get } from 'node:http';
import type { ClusterDescription } from './cluster-description.js';
import { checkHealth, type HealthStatus } from './health.js';
import type { ClusterRole } from './roles.js';

/** One process as `cluster status` shows it. */
export interface ProcessStatus {
  name: string;
  role: ClusterRole | 'redis' | 'nats';
  pid: number;
  alive: boolean;
  address: string;
  /** grpc.health.v1 of a service; servers show '-' (they have none). */
  health: HealthStatus | '-';
  /** Topics whose lease the process holds (owners only), from its metrics; undefined when unknown. */
  ownedTopics: number | undefined;
}

/** How long `cluster status` waits for one process's health or metrics unless told otherwise. */
export const DEFAULT_PROBE_TIMEOUT_MS = 2_000;

function alive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The value of the first sample named like `*_leases_held` in Prometheus text. */
export function leasesHeld(metricsText: string): number | undefined {
  const line = metricsText
    .split('\n')
    .find((candidate) => /^ledgerline_[a-z_]*leases_held(\{[^}]*\})? /.test(candidate));
  if (line === undefined) return undefined;
  const value = Number(line.slice(line.lastIndexOf(' ') + 1));
  return Number.isFinite(value) ? value : undefined;
}

/** The sum of every sample of metric `name` (all label sets) in Prometheus text; 0 when there is none. */
export function metricSum(metricsText: string, name: string): number {
  let sum = 0;
  for (const line of metricsText.split('\n')) {
    if (!line.startsWith(name) || !/^[^ {]+(\{[^}]*\})? /.test(line) || line.split(/[ {]/)[0] !== name) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) sum += value;
  }
  return sum;
}

/** GET http://metricsAddress/metrics; undefined when the process does not answer within `timeoutMs`. */
export function scrapeMetrics(
  metricsAddress: string,
  timeoutMs = DEFAULT_PROBE_TIMEOUT_MS,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    const request = get(`http://${metricsAddress}/metrics`, { timeout: timeoutMs }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve(response.statusCode === 200 ? body : undefined));
      response.on('error', () => resolve(undefined));
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(undefined));
  });
}

/**
 * Probes every process a cluster description names, all at once, waiting at
 * most `probeTimeoutMs` for each one's health check and metrics (a loaded
 * machine may need more than the default).
 */
export async function clusterStatus(
  description: ClusterDescription,
  probeTimeoutMs = DEFAULT_PROBE_TIMEOUT_MS,
): Promise<ProcessStatus[]> {
  const services = description.processes.map(async (entry): Promise<ProcessStatus> => {
    const isAlive = alive(entry.pid);
    const owner = entry.role === 'writer-owner' || entry.role === 'readonly-owner';
    const [health, metrics] = isAlive
      ? await Promise.all([
          checkHealth(entry.address, probeTimeoutMs, description.tls),
          owner ? scrapeMetrics(entry.metricsAddress, probeTimeoutMs) : undefined,
        ])
      : ['UNREACHABLE' as const, undefined];
    return {
      name: entry.name,
      role: entry.role,
      pid: entry.pid,
      alive: isAlive,
      address: entry.address,
      health,
      ownedTopics: metrics === undefined ? undefined : leasesHeld(metrics),
    };
  });
  const servers = description.servers.map((server): ProcessStatus => ({
    name: server.name,
    role: server.name.startsWith('nats') ? 'nats' : 'redis',
    pid: server.pid,
    alive: alive(server.pid),
    address: `127.0.0.1:${server.port}`,
    health: '-',
    ownedTopics: undefined,
  }));
  return [...servers, ...(await Promise.all(services))];
}

/** The table `cluster status` prints. */
export function formatClusterStatus(rows: readonly ProcessStatus[]): string[] {
  const header = ['NAME', 'ROLE', 'PID', 'ADDRESS', 'PROCESS', 'HEALTH', 'OWNED TOPICS'];
  const cells = rows.map((row) => [
    row.name,
    row.role,
    String(row.pid),
    row.address,
    row.alive ? 'running' : 'gone',
    row.health,
    row.ownedTopics === undefined ? '-' : String(row.ownedTopics),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((cell) => cell[column]!.length)));
  return [header, ...cells].map((cell) =>
    cell
      .map((text, column) => text.padEnd(widths[column]!))
      .join('  ')
      .trimEnd(),
  );
}
