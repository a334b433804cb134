import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { CliExit, reportError, type CliIo } from './cli-io.js';
import { DEFAULT_RUN_DIR, callRunner, readRunState, serveControl } from './control.js';
import { removeByPrefix } from './network.js';
import { PodRunner, type PodStatus } from './pod-runner.js';
import { processAlive } from './process-alive.js';
import { sweepStaleRuns } from './run-registry.js';

/*
 * The pod runner's command line (`npm run pods -- <command>`, see main.ts and
 * program.ts): `up --from-manifests <overlay>` and the commands that talk to
 * the runner it starts through its run folder's control socket: pods, scale,
 * delete-pod, drain, rollout restart, partition, heal; `down` stops it.
 */

/** `up --from-manifests`: runs the overlay as pods until Ctrl-C or `down`. */
export async function upFromManifests(io: CliIo, overlay: string, runDir: string): Promise<void> {
  const folder = resolve(runDir);
  if (existsSync(join(folder, 'state.json')) && processAlive(readRunState(folder).pid)) {
    io.err(`error: a pod run already uses ${folder} (pid ${readRunState(folder).pid}): 'npm run pods -- down' first`);
    throw new CliExit(1);
  }
  const runner = await PodRunner.up({ overlay, runDir: folder, log: (line) => io.err(line) });
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= runner.down().then(() => {
      server.close();
      forgetRun(folder);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      io.err('every pod deleted, the run removed');
    });
    return stopping;
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    io.err(`${signal}: deleting every pod (preStop, SIGTERM, SIGKILL at the grace period), then the network`);
    stop().catch((error: unknown) => (process.exitCode = reportError(io, error)));
  };
  const server = await serveControl(runner, overlay, stop);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  io.out(`Ledgerline is up as pods from ${overlay} (run ${runner.prefix}, ${runner.subnet}.0/24, folder ${folder})`);
  for (const line of formatPods(runner.status())) io.out(`  ${line}`);
  io.out(`  logs:   ${folder}/pods/<pod>/logs/`);
  io.out(`  try:    ip netns exec ${runner.prefix}-<pod> ...   or   npm run pods -- pods`);
  io.out('Press Ctrl-C (or run `npm run pods -- down`) to delete every pod.');
}

/** The run folder's state and socket go with the run; logs stay for a look afterwards. */
function forgetRun(folder: string): void {
  rmSync(join(folder, 'state.json'), { force: true });
  rmSync(join(folder, 'control.sock'), { force: true });
}

function formatPods(pods: readonly PodStatus[]): string[] {
  return pods.map(
    (pod) =>
      `${pod.name.padEnd(46)} ${pod.ip.padEnd(14)} ${(pod.terminating ? 'Terminating' : pod.ready ? 'Ready' : 'NotReady').padEnd(12)} restarts ${pod.restarts}  ${pod.owner}`,
  );
}

/** `down`: asks the run's runner to stop, or removes by name what a gone runner left. */
export async function downPods(io: CliIo, runDir: string): Promise<void> {
  const folder = resolve(runDir);
  const state = readRunState(folder);
  if (processAlive(state.pid)) {
    await callRunner(folder, 'down');
    io.out(`asked the pod runner (pid ${state.pid}) to delete every pod`);
  } else {
    removeByPrefix(state.prefix);
    sweepStaleRuns();
    forgetRun(folder);
    rmSync(join(folder, 'claims'), { recursive: true, force: true });
    io.out(`the pod runner (pid ${state.pid}) is gone; removed what run ${state.prefix} left behind`);
  }
}

/** The run folder option every command takes. */
export const RUN_DIR = ['--run-dir <dir>', 'the folder of the pod run', DEFAULT_RUN_DIR] as const;

export function action(io: CliIo, run: (runDir: string, ...args: string[]) => Promise<void>) {
  return async (...values: unknown[]): Promise<void> => {
    // commander passes the positional arguments, then the options, then the command.
    const options = values.find((value) => typeof value === 'object' && value !== null && 'runDir' in value) as {
      runDir: string;
      from?: string[];
    };
    const args = values.filter((value): value is string => typeof value === 'string');
    try {
      await run(resolve(options.runDir), ...args, ...(options.from ?? []));
    } catch (error) {
      if (error instanceof CliExit) throw error;
      throw new CliExit(reportError(io, error));
    }
  };
}

/** The commands that talk to a running pod runner. */
export function registerPodCommands(cluster: Command, io: CliIo): void {
  cluster
    .command('pods')
    .description('list the pods of the run `up --from-manifests` started: address, readiness, restarts')
    .option(...RUN_DIR)
    .action(
      action(io, async (dir) =>
        formatPods((await callRunner(dir, 'pods')) as PodStatus[]).forEach((line) => io.out(line)),
      ),
    );
  cluster
    .command('scale <workload> <replicas>')
    .description('set the replicas of a Deployment or StatefulSet of the pod run')
    .option(...RUN_DIR)
    .action(action(io, async (dir, name, replicas) => void (await callRunner(dir, 'scale', [name!, replicas!]))));
  cluster
    .command('delete-pod <pod>')
    .description(
      'delete a pod as Kubernetes does (preStop, SIGTERM, SIGKILL at the grace period); its workload replaces it',
    )
    .option(...RUN_DIR)
    .action(
      action(io, async (dir, pod) => io.out(((await callRunner(dir, 'delete-pod', [pod!])) as string[]).join(', '))),
    );
  cluster
    .command('drain <pods...>')
    .description(
      'evict pods as kubectl drain does: all at once, each once the PodDisruptionBudgets that select it allow it; their workloads replace them',
    )
    .option('--timeout-ms <ms>', 'how long an eviction may wait for its budget', '300000')
    .option(...RUN_DIR)
    .action((pods: string[], options: { runDir: string; timeoutMs: string }) =>
      action(io, async (dir) => {
        const lines = (await callRunner(dir, 'drain', [options.timeoutMs, ...pods])) as string[];
        lines.forEach((line) => io.out(line));
      })(options),
    );
  cluster
    .command('rollout')
    .description('rollouts of the pod run')
    .command('restart <workload>')
    .description(
      'restart every pod of a Deployment (within its maxSurge and maxUnavailable) or StatefulSet (highest ordinal first)',
    )
    .option(...RUN_DIR)
    .action(action(io, async (dir, name) => void (await callRunner(dir, 'rollout-restart', [name!]))));
  cluster
    .command('partition <pod>')
    .description('cut a pod off from pods or Services (blackhole routes in both namespaces) until `heal`')
    .requiredOption('--from <names...>', 'pods or Service names (a Service stands for every pod it selects)')
    .option(...RUN_DIR)
    .action(
      action(io, async (dir, pod, ...from) =>
        io.out(`${String(await callRunner(dir, 'partition', [pod!, ...from]))} routes added`),
      ),
    );
  cluster
    .command('heal')
    .description('take out every partition of the pod run')
    .option(...RUN_DIR)
    .action(action(io, async (dir) => io.out(`${String(await callRunner(dir, 'heal'))} routes removed`)));
}
