import { dirname, join, resolve } from 'node:path';
import { LedgerlineError } from '@ledgerline/errors';
import {
  CLUSTER_ROLES,
  ClusterReason,
  DEFAULT_DESCRIPTION_FILE,
  DEFAULT_PROBE_TIMEOUT_MS,
  LocalCluster,
  MAX_INSTANCES_PER_ROLE,
  MAX_REDIS_CLUSTER_MASTERS,
  ROLE_SPECS,
  clusterStatus,
  formatClusterStatus,
  readClusterDescription,
  removeClusterDescription,
  roleAvailable,
  writeClusterDescription,
  type ClusterRole,
} from '@ledgerline/cluster';
import { InvalidArgumentError, type Command } from 'commander';
import { integerIn } from '../admin-command.js';
import { CliExit, EXIT_CODES, reportError } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';
import { descriptionOf } from '../command-index.js';

/** The instances `cluster up` starts when not told: the issue's example shape of a small cluster. */
const DEFAULT_COUNTS: Record<ClusterRole, number> = {
  metadata: 2,
  'writer-owner': 3,
  'readonly-owner': 2,
  'garbage-collector': 2,
  'kafka-gateway': 1,
  console: 1,
};

interface UpOptions {
  redisUrl?: string;
  redisCluster?: number | true;
  natsUrl?: string;
  stateFile: string;
  logLevel: string;
  tls?: boolean;
  [countFlag: string]: unknown;
}

const count = integerIn(0, MAX_INSTANCES_PER_ROLE);
const masters = integerIn(3, MAX_REDIS_CLUSTER_MASTERS);
const prefixed = (scheme: RegExp, what: string) => (value: string) => {
  if (!scheme.test(value)) throw new InvalidArgumentError(`expected ${what}.`);
  return value;
};

/** Counts from the flags; the read-only owner defaults to none in a checkout that does not hold it yet. */
function countsOf(options: UpOptions, io: CliIo, root: string | undefined): Partial<Record<ClusterRole, number>> {
  const counts: Partial<Record<ClusterRole, number>> = {};
  for (const spec of ROLE_SPECS) {
    const given = options[spec.countFlag] as number | undefined;
    if (given === undefined && !roleAvailable(spec.role, root)) {
      io.err(`note: no ${spec.role} instances: this checkout has no apps/${spec.app}`);
      counts[spec.role] = 0;
    } else counts[spec.role] = given ?? DEFAULT_COUNTS[spec.role];
  }
  return counts;
}

async function up(io: CliIo, options: UpOptions): Promise<void> {
  const stateFile = resolve(options.stateFile);
  const cluster = await LocalCluster.start({
    counts: countsOf(options, io, undefined),
    redisUrl: options.redisUrl,
    redisClusterMasters: options.redisCluster === true ? 3 : options.redisCluster,
    natsUrl: options.natsUrl,
    logLevel: options.logLevel,
    // Development certificates beside the state file: one per service (its identity) and one for clients.
    ...(options.tls === true ? { tls: { dir: join(dirname(stateFile), 'certs') } } : {}),
  });
  writeClusterDescription(stateFile, { ...cluster.describe(), supervisorPid: process.pid });
  io.out(`Ledgerline cluster is up (${cluster.instances.length} services, each its own process)`);
  io.out(`  redis:  ${cluster.redisUrl}${cluster.redisCluster === undefined ? '' : ' (Redis Cluster)'}`);
  io.out(`  nats:   ${cluster.natsUrl}`);
  for (const instance of cluster.instances) {
    io.out(
      `  ${instance.name.padEnd(22)} grpc ${instance.address}  metrics http://127.0.0.1:${instance.metricsPort}/metrics  pid ${instance.pid}` +
        (instance.kafkaAddress === undefined ? '' : `  kafka ${instance.kafkaAddress}`) +
        (instance.consoleUrl === undefined ? '' : `  console ${instance.consoleUrl}`),
    );
  }
  const metadata = cluster.byRole('metadata')[0]!;
  const tls = cluster.clientTls;
  const tlsFlags = tls === undefined ? '' : ` --tls-ca ${tls.ca} --tls-cert ${tls.cert} --tls-key ${tls.key}`;
  if (tls !== undefined) io.out(`  tls:    every port serves TLS, mutual TLS between services; CA ${tls.ca}`);
  io.out(`  try:    npx ledgerline tenants create my-tenant --url ${metadata.address}${tlsFlags}`);
  const gateway = cluster.byRole('kafka-gateway')[0];
  if (gateway?.kafkaAddress !== undefined)
    io.out(
      `  kafka:  echo hello | kcat -b ${gateway.kafkaAddress} -P -t orders   (any Kafka client, this bootstrap server)`,
    );
  const webConsole = cluster.byRole('console')[0];
  if (webConsole?.consoleUrl !== undefined) io.out(`  console: ${webConsole.consoleUrl}   (open it in a browser)`);
  io.out(`  status: npx ledgerline cluster status --state-file ${stateFile}`);
  io.out('Press Ctrl-C to stop every process.');
  let stopping = false;
  for (const instance of cluster.instances) {
    instance.exited
      ?.then(({ code, signal }) => {
        if (!stopping) io.err(`${instance.name} exited (${signal ?? `status ${code}`}); the others go on`);
      })
      .catch(() => undefined);
  }
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    io.err(`${signal}: stopping every service (owners and collectors first), then the servers`);
    cluster.stop().then(
      () => {
        removeClusterDescription(stateFile);
        io.err('stopped');
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
      },
      (error: unknown) => {
        process.exitCode = reportError(io, error);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

/** The longest `cluster status --timeout` takes: ten minutes. */
const MAX_PROBE_TIMEOUT_MS = 600_000;

async function status(io: CliIo, stateFile: string, timeoutMs: number): Promise<number> {
  const description = readClusterDescription(resolve(stateFile));
  const rows = await clusterStatus(description, timeoutMs);
  io.out(`redis ${description.redisUrl}  nats ${description.natsUrl}`);
  for (const line of formatClusterStatus(rows)) io.out(line);
  const healthy = rows.every((row) => row.alive && (row.health === '-' || row.health === 'SERVING'));
  return healthy ? EXIT_CODES.ok : EXIT_CODES.failed;
}

/** Sends SIGTERM to a process (pid > 0) or a process group (pid < 0); false when it is gone. */
function signalled(pid: number): boolean {
  // 0 (and -0, equal to it) would signal this command's own process group.
  if (!Number.isInteger(pid) || pid === 0) return false;
  try {
    process.kill(pid, 'SIGTERM');
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

/** `ledgerline cluster up|status|down`: a cluster of real processes on this machine (see @ledgerline/cluster). */
export function registerClusterCommands(program: Command, io: CliIo): void {
  const cluster = program.command('cluster').description(descriptionOf('cluster'));
  registerUp(cluster, io);
  registerStatus(cluster, io);
  registerDown(cluster, io);
}

function registerUp(cluster: Command, io: CliIo): void {
  const upCommand = cluster
    .command('up')
    .description(
      'start redis-server and nats-server (unless given) and every service as its own process on loopback; Ctrl-C stops them all',
    )
    .option(
      '--redis-url <url>',
      'use this Redis (redis://host:port, or a Cluster as redis://h1:p1,h2:p2,...)',
      prefixed(/^rediss?:\/\//, 'a redis:// URL'),
    )
    .option('--redis-cluster [masters]', 'start a Redis Cluster of this many masters (3 when not given)', masters)
    .option('--nats-url <url>', 'use this NATS (nats://host:port)', prefixed(/^nats:\/\//, 'a nats:// URL'))
    .option(
      '--state-file <path>',
      'where the running cluster is described for `cluster status`',
      DEFAULT_DESCRIPTION_FILE,
    )
    .option('--log-level <level>', "the services' log level", 'warn')
    .option(
      '--tls',
      'serve TLS everywhere, mutual TLS between services, with development certificates beside the state file',
    );
  for (const spec of ROLE_SPECS) {
    upCommand.option(`--${spec.countFlag} <n>`, `${spec.role} instances (default ${DEFAULT_COUNTS[spec.role]})`, count);
  }
  upCommand.action(async (options: UpOptions) => {
    if (options.redisUrl !== undefined && options.redisCluster !== undefined) {
      io.err('error: give --redis-url or --redis-cluster, not both (run with --help for usage)');
      throw new CliExit(EXIT_CODES.usage);
    }
    try {
      await up(io, options);
    } catch (error) {
      if (error instanceof CliExit) throw error;
      throw new CliExit(reportError(io, error));
    }
  });
}

function registerStatus(cluster: Command, io: CliIo): void {
  cluster
    .command('status')
    .description(
      `show each process of the local cluster: role, pid, health, owned topics (${CLUSTER_ROLES.join(', ')})`,
    )
    .option('--state-file <path>', 'the description `cluster up` wrote', DEFAULT_DESCRIPTION_FILE)
    .option(
      '--timeout <ms>',
      'how long to wait for each process to answer its health check and metrics; one that does not is UNREACHABLE',
      integerIn(1, MAX_PROBE_TIMEOUT_MS),
      DEFAULT_PROBE_TIMEOUT_MS,
    )
    .action(async (options: { stateFile: string; timeout: number }) => {
      let code: number;
      try {
        code = await status(io, options.stateFile, options.timeout);
      } catch (error) {
        throw new CliExit(reportError(io, error));
      }
      if (code !== EXIT_CODES.ok) throw new CliExit(code);
    });
}

/** Signals the `cluster up` process, or, when it is gone, each process group it had started. */
function down(io: CliIo, stateFile: string): void {
  const description = readClusterDescription(resolve(stateFile));
  const pid = description.supervisorPid;
  // Never pid 0 or below: those signal whole process groups, this command's own among them.
  if (pid === undefined || !Number.isInteger(pid) || pid <= 0) {
    throw new LedgerlineError(
      'FAILED_PRECONDITION',
      ClusterReason.NO_CLUSTER,
      `${stateFile} names no cluster up process to stop`,
    );
  }
  if (signalled(pid)) {
    io.out(`asked cluster up (pid ${pid}) to stop`);
    return;
  }
  // cluster up is gone (killed): its processes lead their own groups, so each group is stopped directly.
  const left = [...description.processes, ...description.servers].filter(
    (entry) => entry.pid > 0 && signalled(-entry.pid),
  );
  io.out(`cluster up (pid ${pid}) is gone; sent SIGTERM to ${left.length} process group(s) it had started`);
  removeClusterDescription(resolve(stateFile));
}

function registerDown(cluster: Command, io: CliIo): void {
  cluster
    .command('down')
    .description('ask the `cluster up` that runs the local cluster to stop it (as Ctrl-C does)')
    .option('--state-file <path>', 'the description `cluster up` wrote', DEFAULT_DESCRIPTION_FILE)
    .action(async (options: { stateFile: string }) => {
      try {
        down(io, options.stateFile);
      } catch (error) {
        throw new CliExit(reportError(io, error));
      }
    });
}
