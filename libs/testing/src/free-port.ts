import { createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address === null || typeof address === 'string') reject(new Error('no port assigned'));
        else resolve(address.port);
      });
    });
  });
}

/** A Redis Cluster node also listens on its port + 10,000 (the cluster bus), so its port is at most 55,535. */
const CLUSTER_BUS_PORT_OFFSET = 10_000;
const MAX_CLUSTER_NODE_PORT = 65_535 - CLUSTER_BUS_PORT_OFFSET;
/** Ports tried before giving up on a free port pair. */
const CLUSTER_PORT_ATTEMPTS = 200;

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A free port for a Redis Cluster node whose bus port is free too: an
 * ephemeral port above 55,535 has no bus port, and redis-server exits at once
 * (it failed a whole cluster spec), as it does when another server holds it.
 */
export async function freeClusterNodePort(): Promise<number> {
  for (let attempt = 0; attempt < CLUSTER_PORT_ATTEMPTS; attempt++) {
    const port = await freePort();
    if (port <= MAX_CLUSTER_NODE_PORT && (await canListen(port + CLUSTER_BUS_PORT_OFFSET))) return port;
  }
  throw new Error(`no free port with a free cluster bus port after ${CLUSTER_PORT_ATTEMPTS} tries`);
}

/** Resolves once a TCP connection to host:port succeeds, or rejects after timeoutMs. */
export async function waitForPort(port: number, timeoutMs = 10_000, host = '127.0.0.1'): Promise<void> {
  const { connect } = await import('node:net');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect({ port, host });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listened on ${host}:${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
