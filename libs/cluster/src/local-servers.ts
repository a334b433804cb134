import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LedgerlineError } from '@ledgerline/errors';
import { ChildProcessGroup } from './child-process-group.js';
import { freeClusterNodePort, freePort, portAnswers, waitUntil } from './ports.js';
import { ClusterReason } from './reasons.js';

/** How long a server gets to listen on its port. */
const SERVER_START_TIMEOUT_MS = 20_000;
/** How long a server gets to leave after SIGTERM before it is killed. */
const SERVER_STOP_TIMEOUT_MS = 10_000;

/** A redis-server or nats-server run by a local cluster, on a loopback port, with its own folder. */
export interface LocalServer {
  readonly name: string;
  readonly port: number;
  readonly dir: string;
  readonly pid: number | undefined;
  /** Stops it as a crash would (SIGKILL), keeping port and folder for a restart. */
  kill(): Promise<void>;
  /** Stops it with SIGTERM (Redis writes its AOF out), keeping port and folder. */
  terminate(): Promise<void>;
  /** Starts it again on the same port and folder. */
  restart(): Promise<void>;
  /** Stops it and removes its folder. */
  stop(): Promise<void>;
}

function resolveBinary(binary: string, debianPackage: string): string {
  const found = spawnSync('sh', ['-c', `command -v ${binary} || ls /usr/sbin/${binary} 2>/dev/null`], {
    encoding: 'utf8',
  });
  const path = found.stdout.trim().split('\n')[0];
  if (path === undefined || path === '') {
    throw new LedgerlineError(
      'FAILED_PRECONDITION',
      ClusterReason.START_FAILED,
      `${binary} is not installed: run 'apt-get install ${debianPackage}' (Debian), or give the server's URL`,
    );
  }
  return path;
}

async function startServer(
  name: string,
  binary: string,
  debianPackage: string,
  args: (port: number, dir: string) => string[],
  pickPort: () => Promise<number> = freePort,
): Promise<LocalServer> {
  const path = resolveBinary(binary, debianPackage);
  const port = await pickPort();
  const dir = mkdtempSync(join(tmpdir(), `ledgerline-${name}-`));
  let group: ChildProcessGroup | undefined;
  const launch = async (): Promise<void> => {
    const started = ChildProcessGroup.spawn(name, path, args(port, dir), { cwd: dir });
    group = started;
    const listening = await waitUntil(
      async () => !started.running || (await portAnswers(port)),
      SERVER_START_TIMEOUT_MS,
    );
    if (!listening || !started.running) {
      await started.stop('SIGKILL', SERVER_STOP_TIMEOUT_MS);
      throw new LedgerlineError(
        'UNAVAILABLE',
        ClusterReason.START_FAILED,
        `${name} did not listen on 127.0.0.1:${port} within ${SERVER_START_TIMEOUT_MS} ms: ${started.output.slice(-500)}`,
      );
    }
  };
  const halt = async (signal: NodeJS.Signals): Promise<void> => {
    const running = group;
    group = undefined;
    await running?.stop(signal, SERVER_STOP_TIMEOUT_MS);
  };
  await launch();
  return {
    name,
    port,
    dir,
    get pid() {
      return group?.pid;
    },
    kill: () => halt('SIGKILL'),
    terminate: () => halt('SIGTERM'),
    restart: launch,
    stop: async () => {
      await halt('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface LocalRedisOptions {
  /** Append-only file with fsync on every write, so a SIGKILL loses nothing Redis acknowledged. */
  appendOnly?: boolean;
  extraArgs?: readonly string[];
  name?: string;
  /** A Redis Cluster node: its port leaves room for the cluster bus port (port + 10,000). */
  clusterNode?: boolean;
}

/** A redis-server on loopback, optionally with its append-only file on. */
export function startLocalRedis(options: LocalRedisOptions = {}): Promise<LocalServer> {
  const persistence = options.appendOnly
    ? ['--appendonly', 'yes', '--appendfsync', 'always', '--save', '']
    : ['--appendonly', 'no', '--save', ''];
  return startServer(
    options.name ?? 'redis',
    'redis-server',
    'redis-server',
    (port, dir) => [
      ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir],
      ...persistence,
      ...(options.extraArgs ?? []),
    ],
    options.clusterNode === true ? freeClusterNodePort : freePort,
  );
}

/** A nats-server on loopback (core NATS: the bus needs no JetStream). */
export function startLocalNats(): Promise<LocalServer> {
  return startServer('nats', 'nats-server', 'nats-server', (port) => ['-a', '127.0.0.1', '-p', String(port)]);
}

/** A Redis Cluster of `masters` masters (no replicas) on loopback. */
export interface LocalRedisCluster {
  readonly nodes: readonly LocalServer[];
  /** The Redis setting the services take: redis://host:port,host:port,... (see redisTarget). */
  readonly url: string;
  stop(): Promise<void>;
}

export async function startLocalRedisCluster(masters: number, appendOnly = false): Promise<LocalRedisCluster> {
  const nodes: LocalServer[] = [];
  try {
    for (let index = 0; index < masters; index++) {
      nodes.push(
        await startLocalRedis({
          appendOnly,
          name: `redis-${index}`,
          clusterNode: true,
          // redis-server changes into its --dir, so the cluster file name is relative to it.
          extraArgs: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'],
        }),
      );
    }
    const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
    await redisCli(['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes']);
    // Every node, not one: a client's ready check asks a node at random and starts over on one still converging.
    const ok = await waitUntil(
      async () =>
        (await Promise.all(nodes.map((node) => redisCli(['-p', String(node.port), 'cluster', 'info'])))).every((info) =>
          info.includes('cluster_state:ok'),
        ),
      SERVER_START_TIMEOUT_MS,
      100,
    );
    if (!ok)
      throw new LedgerlineError(
        'UNAVAILABLE',
        ClusterReason.START_FAILED,
        'the Redis Cluster did not reach cluster_state:ok',
      );
    return {
      nodes,
      url: `redis://${addresses.join(',')}`,
      stop: async () => {
        await Promise.all(nodes.map((node) => node.stop()));
      },
    };
  } catch (error) {
    await Promise.all(nodes.map((node) => node.stop()));
    throw error;
  }
}

function redisCli(args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('redis-cli', args, { timeout: SERVER_START_TIMEOUT_MS }, (error, stdout, stderr) =>
      error === null
        ? resolve(stdout)
        : reject(
            new LedgerlineError(
              'UNAVAILABLE',
              ClusterReason.START_FAILED,
              `redis-cli ${args.join(' ')}: ${stderr || error.message}`,
            ),
          ),
    ),
  );
}
