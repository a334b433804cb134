import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import type { Service } from './manifests.js';
import { createBridge, pickSubnet, removeByPrefix } from './network.js';
import type { Pod } from './pod.js';
import { ProxyStats } from './proxy-stats.js';
import { newRunPrefix, registerRun, unregisterRun } from './run-registry.js';
import { ServiceProxy, type ProxyHost } from './service-proxy.js';

/*
 * The proxy's counts are what a stalled run prints about a Service: whether
 * connections arrived at all, found no endpoint, or could not reach the pod
 * picked. Real sockets on a bridge of the test's own; the "pods" are
 * listeners (or closed ports) on the loopback address, and the test connects
 * from the node, so the cluster IP is its own source address.
 */

const prefix = newRunPrefix();
const SERVICE_PORT = 6650;
const service = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'svc' },
  spec: { selector: { app: 'svc' }, ports: [{ port: SERVICE_PORT, targetPort: 'grpc' }] },
} as unknown as Service;

function fakePod(name: string, port: number): Pod {
  const containers = [{ name: 'main', ports: [{ name: 'grpc', containerPort: port }] }];
  return { name, ip: '127.0.0.1', plan: { spec: { containers } } } as unknown as Pod;
}

function listening(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

/** Connects to the proxy, sends `text` and resolves with what came back before the connection closed. */
function exchange(host: string, text: string): Promise<string> {
  return new Promise((resolve) => {
    let received = '';
    const socket = connect({ host, port: SERVICE_PORT }, () => socket.write(text));
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString();
      if (received.length >= text.length) socket.end();
    });
    socket.on('error', () => undefined);
    socket.once('close', () => resolve(received));
  });
}

describe('ServiceProxy', () => {
  const logged: string[] = [];
  let endpoints: Pod[] = [];
  let proxy: ServiceProxy | undefined;
  let echo: Server | undefined;
  let clusterIP = '';

  beforeAll(async () => {
    registerRun({ prefix, pid: process.pid, runDir: tmpdir(), startedAt: new Date().toISOString() });
    const subnet = await pickSubnet(prefix);
    await createBridge(`${prefix}br`, subnet);
    clusterIP = `${subnet}.254`;
    const host: ProxyHost = {
      bridge: `${prefix}br`,
      endpointsOf: () => endpoints,
      events: { log: (line) => logged.push(line) },
    };
    proxy = await ServiceProxy.start(service, clusterIP, host);
    echo = createServer((socket) => socket.pipe(socket));
  });

  afterAll(async () => {
    await proxy?.stop();
    await new Promise((resolve) => echo?.close(resolve) ?? resolve(undefined));
    removeByPrefix(prefix);
    unregisterRun(prefix);
  });

  it('counts what became of each connection and logs each failure', async () => {
    endpoints = [];
    expect(await exchange(clusterIP, 'ping')).toBe('');
    expect(await exchange(clusterIP, 'ping')).toBe('');
    endpoints = [fakePod('pod-a', await listening(echo!))];
    expect(await exchange(clusterIP, 'ping')).toBe('ping');
    const closed = createServer();
    const closedPort = await listening(closed);
    await new Promise((resolve) => closed.close(resolve));
    endpoints = [fakePod('pod-b', closedPort)];
    expect(await exchange(clusterIP, 'ping')).toBe('');

    const stats = proxy!.stats;
    expect([stats.accepted, stats.refused, stats.forwarded, stats.connectFailed]).toEqual([4, 2, 1, 1]);
    // Only the first refusal of a row is logged.
    expect(logged).toEqual([
      expect.stringMatching(/^Service svc: refused 10\.213\.\d+\.254:\d+: no ready endpoint$/),
      'Service svc: forwarding again after 2 refusals',
      expect.stringMatching(/^Service svc: connect-failed 10\.213\.\d+\.254:\d+ -> pod-b after \d+ ms: .*ECONNREFUSED/),
    ]);
    const report = stats.describe();
    expect(report[0]).toBe(
      'Service svc: accepted 4, forwarded 1, refused (no endpoint) 2, connect failed 1, connect timed out 0, dropped by the pod 0',
    );
    expect(report[1]).toMatch(/^ {2}last accepted from: 10\.213\.\d+\.254 \d+ ms ago$/);
    expect(report[2]).toMatch(/^ {2}\d{4}-\d\d-\d\dT\S+Z Service svc: connect-failed .* -> pod-b/);
  }, 30_000);
});

describe('ProxyStats', () => {
  it('keeps the last five failures and counts each kind', () => {
    const stats = new ProxyStats('svc');
    stats.accept('10.0.0.2');
    stats.accept('10.0.0.3');
    for (let index = 0; index < 6; index++) stats.fail('connect-timeout', '10.0.0.2:1', `pod-${index}`, 5000, 'silent');
    stats.fail('dropped', '10.0.0.3:1', 'pod-x', 10, 'read ECONNRESET');
    const report = stats.describe();
    expect(report[0]).toContain('connect timed out 6, dropped by the pod 1');
    expect(report[1]).toMatch(/^ {2}last accepted from: 10\.0\.0\.2 \d+ ms ago, 10\.0\.0\.3 \d+ ms ago$/);
    expect(report.slice(2).map((line) => /-> (\S+)/.exec(line)![1])).toEqual([
      'pod-2',
      'pod-3',
      'pod-4',
      'pod-5',
      'pod-x',
    ]);
  });
});
