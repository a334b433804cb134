import { LedgerlineError } from '@ledgerline/errors';
import { selects, type DisruptionBudget, type Manifests, type Workload } from './manifests.js';
import { PodRunnerReason } from './reasons.js';

/*
 * `pods drain` as `kubectl drain` does it: every pod named is evicted
 * through the eviction rules, which refuse while a PodDisruptionBudget that
 * selects the pod allows no disruption, and kubectl tries again until it may
 * or its timeout passes. The runner has no nodes: each pod stands for a node
 * of its own, and its controller puts the replacement elsewhere, as the
 * Deployment and StatefulSet controllers do after an eviction.
 */

/** What the drain needs of the runner (PodRunner; a test gives a fake). */
export interface DrainTarget {
  readonly manifests: Pick<Manifests, 'budgets' | 'workloads'>;
  readonly replicas: ReadonlyMap<string, number>;
  pod(name: string): DrainedPod;
  podsOf(workload: string): DrainedPod[];
  waitUntil(condition: () => boolean, timeoutMs: number): Promise<boolean>;
  deletePod(name: string): Promise<unknown>;
}

export interface DrainedPod {
  readonly name: string;
  readonly ready: boolean;
  readonly plan: { labels: Record<string, string>; owner: { kind: string; name: string } };
}

/** An integer, or a percentage of `expected` rounded up (the disruption controller scales both fields so). */
function scaled(budget: DisruptionBudget, field: 'minAvailable' | 'maxUnavailable', expected: number): number {
  const value = budget.spec[field]!;
  const percent = typeof value === 'string' ? /^(\d+)%$/.exec(value) : null;
  const amount =
    typeof value === 'number' ? value : percent === null ? NaN : Math.ceil((Number(percent[1]) * expected) / 100);
  if (!Number.isInteger(amount) || amount < 0) {
    throw new LedgerlineError(
      'FAILED_PRECONDITION',
      PodRunnerReason.BAD_MANIFEST,
      `PodDisruptionBudget ${budget.metadata.name}: ${field} must be a non-negative integer or a percentage, not ${String(value)}`,
    );
  }
  return amount;
}

/**
 * How many of the pods a budget selects may be disrupted now: the healthy
 * ones beyond those it must keep (its status.disruptionsAllowed). `expected`
 * is the replicas of the workloads whose pods it selects.
 */
export function disruptionsAllowed(budget: DisruptionBudget, healthy: number, expected: number): number {
  const { minAvailable, maxUnavailable } = budget.spec;
  if ((minAvailable === undefined) === (maxUnavailable === undefined)) {
    throw new LedgerlineError(
      'FAILED_PRECONDITION',
      PodRunnerReason.BAD_MANIFEST,
      `PodDisruptionBudget ${budget.metadata.name} sets exactly one of minAvailable and maxUnavailable`,
    );
  }
  const keep =
    maxUnavailable !== undefined
      ? expected - scaled(budget, 'maxUnavailable', expected)
      : scaled(budget, 'minAvailable', expected);
  return Math.max(0, healthy - keep);
}

function selected(budget: DisruptionBudget, labels: Record<string, string>): boolean {
  return selects(budget.spec.selector?.matchLabels, labels);
}

/** The first budget selecting `pod` that allows no disruption now, or undefined when it may go. */
function blockingBudget(
  target: DrainTarget,
  pod: DrainedPod,
  evicting: ReadonlySet<string>,
): DisruptionBudget | undefined {
  for (const budget of target.manifests.budgets) {
    if (!selected(budget, pod.plan.labels)) continue;
    const workloads = target.manifests.workloads.filter((workload: Workload) =>
      selected(budget, workload.spec.template.metadata.labels ?? {}),
    );
    const expected = workloads.reduce((sum, workload) => sum + (target.replicas.get(workload.metadata.name) ?? 0), 0);
    const healthy = workloads
      .flatMap((workload) => target.podsOf(workload.metadata.name))
      .filter(
        (candidate) => candidate.ready && !evicting.has(candidate.name) && selected(budget, candidate.plan.labels),
      ).length;
    if (disruptionsAllowed(budget, healthy, expected) < 1) return budget;
  }
  return undefined;
}

/**
 * Evicts every pod named, all at once as kubectl drain does, each once the
 * budgets that select it allow it; a pod being evicted counts as disrupted
 * until it is gone. Resolves with a line per pod; rejects FAILED_PRECONDITION
 * / DISRUPTION_BUDGET naming the budget when one still blocks at the bound
 * (the pods already evicted stay evicted, as with kubectl).
 */
export async function drainPods(target: DrainTarget, names: readonly string[], timeoutMs: number): Promise<string[]> {
  const pods = names.map((name) => target.pod(name));
  const evicting = new Set<string>();
  const startedMs = Date.now();
  return Promise.all(
    pods.map(async (pod) => {
      let blocking: DisruptionBudget | undefined;
      // The check claims the pod in the same step, so two evictions never both take a budget's last disruption.
      const claim = (): boolean => {
        blocking = blockingBudget(target, pod, evicting);
        if (blocking === undefined) evicting.add(pod.name);
        return blocking === undefined;
      };
      if (!(await target.waitUntil(claim, timeoutMs))) {
        throw new LedgerlineError(
          'FAILED_PRECONDITION',
          PodRunnerReason.DISRUPTION_BUDGET,
          `cannot evict pod ${pod.name}: PodDisruptionBudget ${blocking?.metadata.name} allowed no disruption within ${timeoutMs} ms`,
          { details: { pod: pod.name, budget: blocking?.metadata.name ?? '' } },
        );
      }
      const waitedMs = Date.now() - startedMs;
      try {
        await target.deletePod(pod.name);
      } finally {
        evicting.delete(pod.name);
      }
      return `evicted ${pod.name} (waited ${waitedMs} ms for its disruption budget, gone after ${Date.now() - startedMs} ms)`;
    }),
  );
}
