import { connect, createServer, type Server, type Socket } from 'node:net';
import { LedgerlineError } from '@ledgerline/errors';
import type { Service } from './manifests.js';
import { ip } from './network.js';
import type { Pod } from './pod.js';
import { resolvePort } from './probe-checks.js';
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

export class ServiceProxy {
  private readonly servers: Server[] = [];
  /** Each proxied connection open now: who, to which pod, since when (for a stalled run's diagnostics). */
  private readonly open = new Map<Socket, { upstream: Socket; pod: string; sinceMs: number }>();
  private next = 0;

  private constructor(
    readonly service: Service,
    readonly clusterIP: string,
    private readonly endpoints: () => Pod[],
  ) {}

  /** Adds `clusterIP` to the bridge and listens on each of the Service's ports there. */
  static async start(
    service: Service,
    clusterIP: string,
    bridge: string,
    endpoints: () => Pod[],
  ): Promise<ServiceProxy> {
    const proxy = new ServiceProxy(service, clusterIP, endpoints);
    await ip(['addr', 'add', `${clusterIP}/32`, 'dev', bridge]);
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

  private forward(client: Socket, targetPort: number | string): void {
    const pods = this.endpoints();
    const pod = pods[this.next++ % Math.max(1, pods.length)];
    const container = pod?.plan.spec.containers.find((candidate) => {
      try {
        resolvePort(candidate, targetPort);
        return true;
      } catch {
        return false;
      }
    });
    if (pod === undefined || container === undefined) {
      // No ready endpoint: the connection is refused, as kube-proxy rejects it.
      client.destroy();
      return;
    }
    const upstream = connect({ host: pod.ip, port: resolvePort(container, targetPort), timeout: CONNECT_TIMEOUT_MS });
    this.open.set(client, { upstream, pod: pod.name, sinceMs: Date.now() });
    client.once('close', () => this.open.delete(client));
    upstream.once('connect', () => upstream.setTimeout(0));
    upstream.once('timeout', () => upstream.destroy());
    client.pipe(upstream).pipe(client);
    client.once('error', () => upstream.destroy());
    upstream.once('error', () => client.destroy());
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
