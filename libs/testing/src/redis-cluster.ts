import { spawn } from 'node:child_process';
import { freeClusterNodePort } from './free-port.js';
import { redisServerSpec, startServerProcess, type ServerProcess } from './server-process.js';

/** A three-master Redis Cluster on loopback ports, for tests. */
export interface RedisClusterProcess {
  readonly nodes: readonly ServerProcess[];
  readonly startupNodes: { host: string; port: number }[];
  stop(): Promise<void>;
}

/**
 * How long a master may go without answering its peers before they mark it
 * failed (Redis's default). A master cannot answer while it runs a script, and
 * a 64 MiB append on a busy machine ran past the 2 s this used to be: the
 * cluster went CLUSTERDOWN for the tests after it. No test here kills a
 * cluster node, so none waits on this.
 */
const CLUSTER_NODE_TIMEOUT_MS = 15_000;

export async function startRedisCluster(masters = 3): Promise<RedisClusterProcess> {
  const nodes: ServerProcess[] = [];
  try {
    for (let i = 0; i < masters; i++) {
      nodes.push(
        await startServerProcess(
          // redis-server changes into its --dir, so the cluster file name is relative to it.
          redisServerSpec([
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            'nodes.conf',
            '--cluster-node-timeout',
            String(CLUSTER_NODE_TIMEOUT_MS),
          ]),
          await freeClusterNodePort(),
        ),
      );
    }
    return await formCluster(nodes);
  } catch (error) {
    await Promise.all(nodes.map((node) => node.stop()));
    throw error;
  }
}

async function formCluster(nodes: ServerProcess[]): Promise<RedisClusterProcess> {
  const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
  await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes']);
  // Every node, not one: a client's ready check asks a node at random, and one still in
  // cluster_state:fail makes it drop the connection and start over (seen failing a connect on a busy machine).
  await Promise.all(nodes.map((node) => waitForClusterOk(node.port)));
  return {
    nodes,
    startupNodes: nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
    stop: async () => {
      await Promise.all(nodes.map((n) => n.stop()));
    },
  };
}

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(output) : reject(new Error(`${command} ${args.join(' ')} failed (${code}): ${output}`)),
    );
  });
}

async function waitForClusterOk(port: number, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const info = await run('redis-cli', ['-p', String(port), 'cluster', 'info']);
    if (info.includes('cluster_state:ok')) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the Redis Cluster on port ${port} did not reach cluster_state:ok in ${timeoutMs} ms`);
}
