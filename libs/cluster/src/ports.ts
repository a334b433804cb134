import { connect, createServer } from 'node:net';

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

/** Whether a TCP connection to 127.0.0.1:port succeeds now. */
export function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Checks `condition` every `intervalMs` until it holds; false once `timeoutMs` ran out. */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  intervalMs = 50,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** A Redis Cluster node also listens on its port + 10,000 (the cluster bus), so its port is at most 55,535. */
export const CLUSTER_BUS_PORT_OFFSET = 10_000;
const MAX_CLUSTER_NODE_PORT = 65_535 - CLUSTER_BUS_PORT_OFFSET;
/** Ports tried before giving up on a free port pair. */
const CLUSTER_PORT_ATTEMPTS = 200;

/** Whether 127.0.0.1:port can be listened on right now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A free port for a Redis Cluster node whose bus port is free too. An
 * ephemeral port above 55,535 has no bus port (redis-server exits at once),
 * and one whose bus port another server holds fails the same way.
 */
export async function freeClusterNodePort(): Promise<number> {
  for (let attempt = 0; attempt < CLUSTER_PORT_ATTEMPTS; attempt++) {
    const port = await freePort();
    if (port <= MAX_CLUSTER_NODE_PORT && (await canListen(port + CLUSTER_BUS_PORT_OFFSET))) return port;
  }
  throw new Error(`no free port with a free cluster bus port after ${CLUSTER_PORT_ATTEMPTS} tries`);
}
