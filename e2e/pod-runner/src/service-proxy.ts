import { connect, createServer, type Server, type Socket } from 'node:net';
import { LedgerlineError } from '@ledgerline/errors';
import type { Service } from './manifests.js';
import { ip } from './network.js';
import type { Pod } from './pod.js';
import { resolvePort } from './probe-checks.js';
import { ProxyStats } from './proxy-stats.js';
import { PodRunnerReason } from './reasons.js';

/*
 * A Service's cluster IP, as kube-proxy's userspace mode gave it: an address
 * of the node (on the run's bridge) with a TCP proxy per port that sends each
 * new connection to one of the Service's ready pods in turn. A connection
 * already open stays with its pod when the pod leaves the endpoints, as
 * conntrack keeps it; the Service's name keeps one address while its pods
 * come and go, so a client never has to resolve the name again.
 */

/** How long a proxied connection to a pod may take to open. */
const CONNECT_TIMEOUT_MS = 5_000;

/** What a proxy needs of its run (the PodRunner): the bridge, a Service's ready pods now, where failures go. */
export interface ProxyHost {
  readonly bridge: string;
  endpointsOf(service: Service): Pod[];
  readonly events: { log(line: string): void };
}

export class ServiceProxy {
  private readonly servers: Server[] = [];
  /** Each proxied connection open now: who, to which pod, since when (for a stalled run's diagnostics). */
  private readonly open = new Map<Socket, { upstream: Socket; pod: string; sinceMs: number }>();
  private next = 0;
  /** What became of the connections accepted so far (printed when a run stalls). */
  readonly stats: ProxyStats;

  private constructor(
    readonly service: Service,
    readonly clusterIP: string,
    private readonly host: ProxyHost,
  ) {
    this.stats = new ProxyStats(service.metadata.name, host.events.log);
  }

  /** Adds `clusterIP` to the host's bridge and listens on each of the Service's ports there. */
  static async start(service: Service, clusterIP: string, host: ProxyHost): Promise<ServiceProxy> {
    const proxy = new ServiceProxy(service, clusterIP, host);
    await ip(['addr', 'add', `${clusterIP}/32`, 'dev', host.bridge]);
    try {
      for (const port of service.spec.ports ?? []) await proxy.listen(port.port, port.targetPort ?? port.port);
    } catch (error) {
      await proxy.stop();
      throw error;
    }
    return proxy;
  }

  private listen(port: number, targetPort: number | string): Promise<void> {
    const server = createServer((socket) => this.forward(socket, targetPort));
    this.servers.push(server);
    return new Promise((resolve, reject) => {
      server.once('error', (error) =>
        reject(
          new LedgerlineError(
            'FAILED_PRECONDITION',
            PodRunnerReason.NETWORK_FAILED,
            `Service ${this.service.metadata.name}: cannot listen on ${this.clusterIP}:${port}: ${error.message}`,
          ),
        ),
      );
      server.listen(port, this.clusterIP, () => resolve());
    });
  }

  /** The next ready pod in turn and its port for `targetPort`; undefined when no pod has it. */
  private pick(targetPort: number | string): { pod: Pod; port: number } | undefined {
    const pods = this.host.endpointsOf(this.service);
    const pod = pods[this.next++ % Math.max(1, pods.length)];
    if (pod === undefined) return undefined;
    for (const container of pod.plan.spec.containers) {
      try {
        return { pod, port: resolvePort(container, targetPort) };
      } catch {
        // Not this container's port.
      }
    }
    return undefined;
  }

  private forward(client: Socket, targetPort: number | string): void {
    this.stats.accept(client.remoteAddress ?? '?');
    const from = `${client.remoteAddress}:${client.remotePort}`;
    const target = this.pick(targetPort);
    if (target === undefined) {
      // No ready endpoint: the connection is refused, as kube-proxy rejects it.
      this.stats.refuse(from);
      client.destroy();
      return;
    }
    const { pod } = target;
    const sinceMs = Date.now();
    const upstream = connect({ host: pod.ip, port: target.port, timeout: CONNECT_TIMEOUT_MS });
    this.open.set(client, { upstream, pod: pod.name, sinceMs });
    client.once('close', () => this.open.delete(client));
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      upstream.setTimeout(0);
      this.stats.forward();
    });
    upstream.once('timeout', () => {
      this.stats.fail('connect-timeout', from, pod.name, Date.now() - sinceMs, `${pod.ip}:${target.port} silent`);
      upstream.destroy();
    });
    client.pipe(upstream).pipe(client);
    client.once('error', () => upstream.destroy());
    upstream.once('error', (error) => {
      const kind = connected ? 'dropped' : 'connect-failed';
      this.stats.fail(kind, from, pod.name, Date.now() - sinceMs, `${pod.ip}:${target.port}: ${error.message}`);
      client.destroy();
    });
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  }

  /** One line per open proxied connection: client, pod, age and bytes each way (a silent one shows as stuck counts). */
  describeConnections(): string[] {
    const now = Date.now();
    return [...this.open].map(
      ([client, { upstream, pod, sinceMs }]) =>
        `${this.service.metadata.name} ${client.remoteAddress}:${client.remotePort} -> ${pod} ` +
        `(${now - sinceMs} ms, ${client.bytesRead} bytes up, ${upstream.bytesRead} bytes down)`,
    );
  }

  /** Closes the listeners and every proxied connection, and takes the address off the bridge. */
  async stop(): Promise<void> {
    for (const [client, { upstream }] of this.open) {
      client.destroy();
      upstream.destroy();
    }
    await Promise.all(this.servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }
}
