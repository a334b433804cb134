import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials } from '@grpc/grpc-js';
import { createClient, type LedgerlineClient } from '@ledgerline/client';
import { AdminService } from '@ledgerline/proto';
import { closeClient, createClient as createRpcClient } from '@ledgerline/rpc';
import { eventually, freePort } from '@ledgerline/testing';
import { clusterStatus } from './cluster-status.js';
import { checkHealth } from './health.js';
import { LocalCluster } from './local-cluster.js';
import { ClusterReason } from './reasons.js';

/** How long a probe here waits for a process's answer: more than `cluster status` does, for a machine running other suites. */
const PROBE_TIMEOUT_MS = 30_000;

// The harness itself: a Redis Cluster, NATS and services as processes; what
// it reports, how it replaces a killed process, and that stop leaves nothing.

describe('LocalCluster', () => {
  let cluster: LocalCluster | undefined;
  let client: LedgerlineClient | undefined;

  afterAll(async () => {
    await client?.close();
    await cluster?.stop();
  }, 120_000);

  it('refuses counts out of range and services without a metadata service before starting anything', async () => {
    await expect(LocalCluster.start({ counts: { 'writer-owner': 17, metadata: 1 } })).rejects.toMatchObject({
      reason: ClusterReason.BAD_CLUSTER_OPTION,
    });
    await expect(LocalCluster.start({ counts: { 'writer-owner': 1 } })).rejects.toMatchObject({
      reason: ClusterReason.BAD_CLUSTER_OPTION,
    });
    await expect(LocalCluster.start({ counts: { metadata: 1 }, redisClusterMasters: 2 })).rejects.toMatchObject({
      reason: ClusterReason.BAD_CLUSTER_OPTION,
    });
  });

  it('runs the services over a three-master Redis Cluster, reports them, replaces a killed one and stops every process', async () => {
    cluster = await LocalCluster.start({
      counts: { metadata: 2, 'writer-owner': 1, 'garbage-collector': 1 },
      redisClusterMasters: 3,
      settings: { 'writer-owner': { LEDGERLINE_LEASE_TTL_MS: '2000' } },
    });
    expect(cluster.redisUrl).toMatch(/^redis:\/\/127\.0\.0\.1:\d+,127\.0\.0\.1:\d+,127\.0\.0\.1:\d+$/);
    expect(cluster.metadataTarget).toMatch(/^ipv4:127\.0\.0\.1:\d+,127\.0\.0\.1:\d+$/);
    const admin = createRpcClient(AdminService, cluster.byRole('metadata')[0]!.address);
    try {
      await admin.createTenant({ tenant: 'harness' });
      await admin.createNamespace({ namespace: 'harness/ns' });
      await admin.createTopic({ topic: 'persistent://harness/ns/t' });
    } finally {
      closeClient(admin);
    }
    client = createClient({ serviceUrl: cluster.byRole('metadata')[1]!.address, maxReconnectAttempts: 50 });
    const producer = await client.producer({ topic: 'persistent://harness/ns/t', producerName: 'harness' });
    await producer.send('before');

    const rows = await clusterStatus(cluster.describe(), PROBE_TIMEOUT_MS);
    expect(rows.map((row) => [row.role, row.alive, row.health])).toEqual([
      ['redis', true, '-'],
      ['redis', true, '-'],
      ['redis', true, '-'],
      ['nats', true, '-'],
      ['metadata', true, 'SERVING'],
      ['metadata', true, 'SERVING'],
      ['writer-owner', true, 'SERVING'],
      ['garbage-collector', true, 'SERVING'],
    ]);
    expect(rows.find((row) => row.role === 'writer-owner')!.ownedTopics).toBe(1);

    const writer = cluster.byRole('writer-owner')[0]!;
    const killedPid = writer.pid!;
    expect(await writer.stop('SIGKILL')).toBe(true);
    const afterKill = await clusterStatus(cluster.describe(), PROBE_TIMEOUT_MS);
    expect(afterKill.find((row) => row.name === writer.name)).toMatchObject({ alive: false, health: 'UNREACHABLE' });
    const replacement = await cluster.add('writer-owner');
    expect(replacement.pid).not.toBe(killedPid);
    // The producer finds the topic on the new owner once the dead one's lease lapses.
    await producer.send('after');
    await producer.close();

    const pids = [
      ...cluster.instances.map((instance) => instance.pid),
      ...cluster.redisServers.map((server) => server.pid),
      cluster.nats?.pid,
    ].filter((pid): pid is number => pid !== undefined);
    const addresses = cluster.instances.map((instance) => instance.address);
    await client.close();
    client = undefined;
    const stopping = cluster;
    cluster = undefined;
    await stopping.stop();
    const gone = (pid: number): boolean => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    };
    await eventually(() => pids.every(gone), { description: 'every process of the cluster gone' });
    for (const address of addresses) expect(await checkHealth(address, 500)).toBe('UNREACHABLE');
  }, 240_000);
});

describe('LocalCluster ports', () => {
  let cluster: LocalCluster | undefined;
  let taken: Server | undefined;

  afterAll(async () => {
    await cluster?.stop();
    taken?.close();
  }, 120_000);

  it('starts an instance again on other ports when the ones it was given are taken before it binds them', async () => {
    // It holds the port and nothing more: a health check that reaches it is closed at once.
    taken = createServer((socket) => socket.destroy()).listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const takenPort = (taken.address() as AddressInfo).port;
    let handOutTaken = true;
    cluster = await LocalCluster.start({
      counts: { metadata: 1 },
      // The metadata instance's first gRPC port is one another process holds, as when a port found
      // free is taken by a test started beside it.
      freePort: async () => {
        if (!handOutTaken) return freePort();
        handOutTaken = false;
        return takenPort;
      },
    });
    const [metadata] = cluster.byRole('metadata');
    expect(metadata!.grpcPort).not.toBe(takenPort);
    expect(cluster.instances).toHaveLength(1);
    expect(await checkHealth(metadata!.address)).toBe('SERVING');
  }, 180_000);
});

describe('LocalCluster with TLS', () => {
  let cluster: LocalCluster | undefined;
  let client: LedgerlineClient | undefined;
  let dir: string | undefined;

  afterAll(async () => {
    await client?.close();
    await cluster?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it('serves TLS on every port with mutual TLS between the services, and reports them healthy', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-cluster-tls-'));
    cluster = await LocalCluster.start({
      counts: { metadata: 1, 'writer-owner': 1 },
      tls: { dir: join(dir, 'certs') },
    });
    const tls = cluster.clientTls!;
    const metadata = cluster.byRole('metadata')[0]!;
    // Plaintext gets no answer; the client certificate and the CA do.
    expect(await checkHealth(metadata.address, 2_000)).toBe('UNREACHABLE');
    expect(await checkHealth(metadata.address, PROBE_TIMEOUT_MS, tls)).toBe('SERVING');
    const statuses = await clusterStatus(cluster.describe(), PROBE_TIMEOUT_MS);
    const services = statuses.filter((s) => s.role !== 'redis' && s.role !== 'nats');
    expect(services.map((s) => [s.role, s.health])).toEqual([
      ['metadata', 'SERVING'],
      ['writer-owner', 'SERVING'],
    ]);

    const admin = createRpcClient(AdminService, metadata.address, {
      credentials: credentials.createSsl(readFileSync(tls.ca), readFileSync(tls.key), readFileSync(tls.cert)),
    });
    try {
      await admin.createTenant({ tenant: 'secure' });
      await admin.createNamespace({ namespace: 'secure/ns' });
      await admin.createTopic({ topic: 'persistent://secure/ns/t' });
    } finally {
      closeClient(admin);
    }
    // Publishing reaches the writer owner, which registered and took its lease over mutual TLS.
    client = createClient({
      serviceUrl: metadata.address,
      tls: { ca: readFileSync(tls.ca), cert: readFileSync(tls.cert), key: readFileSync(tls.key) },
    });
    const producer = await client.producer({ topic: 'secure/ns/t', batching: false });
    expect((await producer.send('over tls')).offset).toBe(0n);
  }, 180_000);
});
