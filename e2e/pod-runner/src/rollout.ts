import { LedgerlineError } from '@ledgerline/errors';
import type { Workload } from './manifests.js';
import type { Pod } from './pod.js';
import { PodRunnerReason } from './reasons.js';

/** What a rollout needs of the runner: its workloads' pods, and making, deleting and awaiting them. */
export interface RolloutRunner {
  readonly pods: ReadonlyMap<string, Pod>;
  readonly replicas: ReadonlyMap<string, number>;
  readonly revisions: ReadonlyMap<string, string>;
  podsOf(name: string): Pod[];
  addDeploymentPods(workload: Workload, count: number): Promise<Pod[]>;
  removePod(pod: Pod): Promise<void>;
  deletePod(name: string): Promise<string[]>;
  waitUntil(condition: () => boolean, timeoutMs: number): Promise<boolean>;
}

/** How often a wait re-checks its condition besides on readiness changes. */
const POLL_MS = 1_000;

/** Resolves true once `condition` holds, checked on each listener call and every second; false after `timeoutMs`. */
export function waitFor(condition: () => boolean, timeoutMs: number, listeners: Set<() => void>): Promise<boolean> {
  return new Promise((resolve) => {
    if (condition()) return resolve(true);
    const finish = (result: boolean): void => {
      clearTimeout(timer);
      clearInterval(poll);
      listeners.delete(check);
      resolve(result);
    };
    const check = (): void => {
      if (condition()) finish(true);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    const poll = setInterval(check, POLL_MS);
    listeners.add(check);
  });
}

/**
 * maxSurge / maxUnavailable as the Deployment controller reads them: an
 * integer, or a percentage of the replicas (surge rounded up, unavailable
 * down); Kubernetes' default is 25% each, and both 0 is refused.
 */
export function rollingBounds(workload: Workload, replicas: number): { maxSurge: number; maxUnavailable: number } {
  const rolling = workload.spec.strategy?.rollingUpdate;
  const amount = (value: number | string | undefined, round: (x: number) => number): number => {
    const given = value ?? '25%';
    if (typeof given === 'number') return given;
    const percent = /^(\d+)%$/.exec(given);
    if (percent === null) return Number(given);
    return round((Number(percent[1]) * replicas) / 100);
  };
  const maxSurge = amount(rolling?.maxSurge, Math.ceil);
  const maxUnavailable = amount(rolling?.maxUnavailable, Math.floor);
  if (!Number.isInteger(maxSurge) || !Number.isInteger(maxUnavailable) || (maxSurge === 0 && maxUnavailable === 0)) {
    throw new LedgerlineError(
      'FAILED_PRECONDITION',
      PodRunnerReason.BAD_MANIFEST,
      `Deployment ${workload.metadata.name}: maxSurge and maxUnavailable must be integers or percentages, not both 0`,
    );
  }
  return { maxSurge, maxUnavailable };
}

/** One step of a rolling update: how many new pods to make and how many old ones to delete now. */
export function rollingStep(
  state: { replicas: number; oldPods: number; newPods: number; readyPods: number },
  bounds: { maxSurge: number; maxUnavailable: number },
): { create: number; remove: number } {
  const room = state.replicas + bounds.maxSurge - (state.oldPods + state.newPods);
  const create = Math.max(0, Math.min(room, state.replicas - state.newPods));
  const remove = Math.max(0, Math.min(state.oldPods, state.readyPods - (state.replicas - bounds.maxUnavailable)));
  return { create, remove };
}

/** A rolling update of a Deployment to the runner's current revision of it, within maxSurge and maxUnavailable. */
export async function rollDeployment(runner: RolloutRunner, workload: Workload, timeoutMs: number): Promise<void> {
  const name = workload.metadata.name;
  const revision = runner.revisions.get(name)!;
  const replicas = runner.replicas.get(name)!;
  const bounds = rollingBounds(workload, replicas);
  const deadline = Date.now() + timeoutMs;
  const deletions: Promise<void>[] = [];
  for (;;) {
    const all = runner.podsOf(name);
    const oldPods = all.filter((pod) => pod.plan.revision !== revision);
    const newPods = all.filter((pod) => pod.plan.revision === revision);
    if (oldPods.length === 0 && newPods.length === replicas && newPods.every((pod) => pod.ready)) break;
    const step = rollingStep(
      { replicas, oldPods: oldPods.length, newPods: newPods.length, readyPods: all.filter((pod) => pod.ready).length },
      bounds,
    );
    if (step.create > 0) await runner.addDeploymentPods(workload, step.create);
    const doomed = [...oldPods].sort((a, b) => Number(a.ready) - Number(b.ready)).slice(0, step.remove);
    deletions.push(...doomed.map((pod) => runner.removePod(pod)));
    if (step.create === 0 && step.remove === 0) {
      const before = runner.podsOf(name).filter((pod) => pod.ready).length;
      const changed = await runner.waitUntil(
        () => runner.podsOf(name).filter((pod) => pod.ready).length !== before,
        Math.max(0, deadline - Date.now()),
      );
      if (!changed) throw stuck(name, timeoutMs);
    }
    if (Date.now() > deadline) throw stuck(name, timeoutMs);
  }
  await Promise.all(deletions);
}

/** A StatefulSet's rolling update: from the highest ordinal down, each pod replaced and ready before the next. */
export async function rollStatefulSet(runner: RolloutRunner, workload: Workload, timeoutMs: number): Promise<void> {
  const name = workload.metadata.name;
  const replicas = runner.replicas.get(name)!;
  for (let ordinal = replicas - 1; ordinal >= 0; ordinal--) {
    const podName = `${name}-${ordinal}`;
    await runner.deletePod(podName);
    const ready = await runner.waitUntil(() => runner.pods.get(podName)?.ready === true, timeoutMs);
    if (!ready) throw stuck(name, timeoutMs);
  }
}

function stuck(name: string, timeoutMs: number): LedgerlineError {
  return new LedgerlineError(
    'DEADLINE_EXCEEDED',
    PodRunnerReason.ROLLOUT_STUCK,
    `the rollout of ${name} did not finish within ${timeoutMs} ms: see its pods' logs under the run folder`,
  );
}
