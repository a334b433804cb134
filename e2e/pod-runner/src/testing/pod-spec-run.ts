import { linksWithPrefix, namespacesWithPrefix } from '../network.js';
import { join } from 'node:path';
import { PodRunner } from '../pod-runner.js';
import { ensureAppBundles } from './app-bundles.js';
import { PodWorkload } from './pod-workload.js';

/** The run and the workload of one pod spec: whatever the spec leaves set is stopped after it. */
export interface PodSpecRun {
  runner: PodRunner | undefined;
  workload: PodWorkload | undefined;
  /** Runs the dev overlay as pods (this spec's runner), printing why a container exited as it happens. */
  up(): Promise<PodRunner>;
}

/** A run of the dev overlay as pods (not yet up), printing why a container exited as it happens; no hooks. */
export function devOverlayRun(root: string): PodSpecRun {
  const run: PodSpecRun = {
    runner: undefined,
    workload: undefined,
    async up() {
      run.runner = await PodRunner.up({
        overlay: join(root, 'deploy/overlays/dev'),
        root,
        log: (line) => {
          if (/exited|probe failed|connect-timeout/.test(line))
            process.stdout.write(`${new Date().toISOString()} ${line}\n`);
        },
      });
      return run.runner;
    },
  };
  return run;
}

/**
 * Registers a pod spec's set-up and tear-down: the app bundles are built
 * before it, and after it (failed or not) the workload is killed and every
 * pod deleted, so a failing spec leaves nothing behind either.
 */
export function podSpecRun(root: string): PodSpecRun {
  const run = devOverlayRun(root);
  beforeAll(() => ensureAppBundles(root), 900_000);
  afterAll(async () => {
    await run.workload?.kill();
    await run.runner?.down();
  }, 300_000);
  return run;
}

/** Takes the run down and returns what it left on the machine: its network namespaces and links ([] when clean). */
export async function downAndLeftovers(run: PodSpecRun): Promise<string[]> {
  const runner = run.runner;
  if (runner === undefined) return [];
  const prefix = runner.prefix;
  await runner.down();
  run.runner = undefined;
  return [...namespacesWithPrefix(prefix), ...linksWithPrefix(prefix)];
}

/**
 * The start of the writer owner fault specs: the dev overlay with two writer owners, a client pod, and
 * the SDK workload (topics under `tenant`) past its first 300 acknowledgements.
 */
export async function twoWriterOwnersUnderLoad(
  run: PodSpecRun,
  tenant: string,
): Promise<{ runner: PodRunner; workload: PodWorkload }> {
  const runner = await run.up();
  await runner.scale('ledgerline-writer-owner', 2);
  const ready = await runner.waitUntil(
    () => runner.podsOf('ledgerline-writer-owner').every((pod) => pod.ready),
    120_000,
  );
  if (!ready) throw new Error('the second writer owner pod was not ready within 120 s');
  await runner.addClientPod('client');
  const workload = (run.workload = await PodWorkload.start(runner, 'client', tenant));
  await workload.waitForAcks(300, 60_000);
  return { runner, workload };
}
