// Loaded by the Jest global setup outside its module mapper: imports carry no .js suffix.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitForPort } from './free-port';

/** A throwaway server process on a loopback port, with its own temp folder. */
export interface ServerProcess {
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  readonly pid: number | undefined;
  /** Stops the process (SIGKILL: as a crash would) and keeps the port for restart. */
  kill(): Promise<void>;
  /** Starts the process again on the same port and folder. */
  restart(): Promise<void>;
  /** Stops the process and removes its folder. */
  stop(): Promise<void>;
}

export interface BinarySpec {
  binary: string;
  debianPackage: string;
  args: (port: number, dir: string) => string[];
  url: (port: number) => string;
}

/** Fails with one line saying what to install when a server binary is missing. */
export function requireBinary(binary: string, debianPackage: string): void {
  const found = spawnSync(
    'sh',
    ['-c', `command -v ${binary} || ls /usr/sbin/${binary} /usr/bin/${binary} 2>/dev/null`],
    {
      encoding: 'utf8',
    },
  );
  if (found.stdout.trim() === '') {
    throw new Error(`${binary} is not installed: run 'apt-get install ${debianPackage}' (Debian) and try again.`);
  }
}

function resolveBinary(binary: string): string {
  const found = spawnSync('sh', ['-c', `command -v ${binary} || ls /usr/sbin/${binary} 2>/dev/null`], {
    encoding: 'utf8',
  });
  return found.stdout.trim().split('\n')[0] || binary;
}

export async function startServerProcess(spec: BinarySpec, fixedPort?: number): Promise<ServerProcess> {
  requireBinary(spec.binary, spec.debianPackage);
  const binary = resolveBinary(spec.binary);
  const port = fixedPort ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), `ledgerline-${spec.binary}-`));
  let child: ChildProcess | undefined;

  const launch = async (): Promise<void> => {
    const proc = spawn(binary, spec.args(port, dir), { stdio: 'ignore', detached: false });
    child = proc;
    const exited = new Promise<never>((_, reject) =>
      proc.once('exit', (code) => reject(new Error(`${spec.binary} exited with code ${code} before listening`))),
    );
    exited.catch(() => undefined);
    await Promise.race([waitForPort(port), exited]);
  };

  const kill = async (): Promise<void> => {
    const proc = child;
    child = undefined;
    if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill('SIGKILL');
    });
  };

  await launch();
  return {
    port,
    dir,
    url: spec.url(port),
    get pid() {
      return child?.pid;
    },
    kill,
    restart: launch,
    stop: async () => {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** How to run a throwaway redis-server: no persistence, loopback only, plus any extra arguments. */
export function redisServerSpec(extraArgs: readonly string[] = []): BinarySpec {
  return {
    binary: 'redis-server',
    debianPackage: 'redis-server',
    args: (p, dir) => [
      ...['--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      ...extraArgs,
    ],
    url: (p) => `redis://127.0.0.1:${p}`,
  };
}

export interface StartRedisOptions {
  port?: number;
  /** More redis-server arguments, e.g. ['--replicaof', host, port]. */
  extraArgs?: readonly string[];
}

/** A throwaway redis-server: no persistence, loopback only. */
export function startRedis(options: StartRedisOptions = {}): Promise<ServerProcess> {
  return startServerProcess(redisServerSpec(options.extraArgs), options.port);
}

/** A throwaway nats-server with JetStream, loopback only. */
export function startNats(port?: number): Promise<ServerProcess> {
  return startServerProcess(
    {
      binary: 'nats-server',
      debianPackage: 'nats-server',
      args: (p, dir) => ['-a', '127.0.0.1', '-p', String(p), '-js', '-sd', dir],
      url: (p) => `nats://127.0.0.1:${p}`,
    },
    port,
  );
}
