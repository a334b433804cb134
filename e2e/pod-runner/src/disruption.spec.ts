import { refusal } from '@ledgerline/testing';
import { disruptionsAllowed, drainPods, type DrainTarget, type DrainedPod } from './disruption.js';
import type { DisruptionBudget, Workload } from './manifests.js';
import { PodRunnerReason } from './reasons.js';

function budget(spec: DisruptionBudget['spec'], name = 'pdb'): DisruptionBudget {
  return { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name }, spec };
}

describe('disruptionsAllowed', () => {
  it.each([
    [{ maxUnavailable: 1 }, 3, 3, 1],
    [{ maxUnavailable: 1 }, 2, 3, 0],
    [{ maxUnavailable: '25%' }, 3, 3, 1],
    [{ maxUnavailable: '50%' }, 4, 4, 2],
    [{ minAvailable: 2 }, 3, 3, 1],
    [{ minAvailable: '50%' }, 3, 3, 1],
    [{ minAvailable: '100%' }, 3, 3, 0],
    [{ maxUnavailable: 1 }, 1, 1, 1],
    [{ minAvailable: 1 }, 1, 1, 0],
  ] as const)('%j with %i healthy of %i expected allows %i', (spec, healthy, expected, allowed) => {
    expect(disruptionsAllowed(budget(spec), healthy, expected)).toBe(allowed);
  });

  it('refuses a budget that sets both fields, neither, or a value that is no count', () => {
    for (const spec of [{}, { minAvailable: 1, maxUnavailable: 1 }, { maxUnavailable: 'one' }, { minAvailable: -1 }]) {
      expect(() => disruptionsAllowed(budget(spec), 3, 3)).toThrow(
        expect.objectContaining({ reason: PodRunnerReason.BAD_MANIFEST }),
      );
    }
  });
});

/**
 * A Deployment `app` of `replicas` pods under one budget. A deleted pod
 * leaves at once and its replacement turns ready when the test says, as a
 * real one does once its readiness probe passes.
 */
class FakeDeployment implements DrainTarget {
  readonly replicas = new Map<string, number>();
  readonly manifests: DrainTarget['manifests'];
  private readonly pods = new Map<string, DrainedPod & { ready: boolean }>();
  private readonly listeners = new Set<() => void>();
  private made = 0;
  /** The fewest ready pods seen at any moment. */
  fewestReady = Infinity;
  /** Replacements waiting for the test to make them ready. */
  readonly starting: string[] = [];

  constructor(replicas: number, spec: DisruptionBudget['spec']) {
    const labels = { app: 'app' };
    const workload = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'app' },
      spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [] } } },
    } as Workload;
    this.manifests = { budgets: [budget({ ...spec, selector: { matchLabels: labels } })], workloads: [workload] };
    this.replicas.set('app', replicas);
    for (let i = 0; i < replicas; i++) this.add(true);
  }

  private add(ready: boolean): string {
    const name = `app-${this.made++}`;
    this.pods.set(name, { name, ready, plan: { labels: { app: 'app' }, owner: { kind: 'Deployment', name: 'app' } } });
    return name;
  }

  private changed(): void {
    const ready = [...this.pods.values()].filter((pod) => pod.ready).length;
    this.fewestReady = Math.min(this.fewestReady, ready);
    for (const listener of [...this.listeners]) listener();
  }

  pod(name: string): DrainedPod {
    const pod = this.pods.get(name);
    if (pod === undefined) throw new Error(`no pod ${name}`);
    return pod;
  }

  podsOf(): DrainedPod[] {
    return [...this.pods.values()];
  }

  podNames(): string[] {
    return [...this.pods.keys()];
  }

  async deletePod(name: string): Promise<void> {
    this.pods.delete(name);
    this.starting.push(this.add(false));
    this.changed();
  }

  /** The oldest replacement passes its readiness probe. */
  becomeReady(): void {
    const name = this.starting.shift();
    if (name !== undefined) this.pods.get(name)!.ready = true;
    this.changed();
  }

  waitUntil(condition: () => boolean, timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      if (condition()) return resolve(true);
      const check = (): void => {
        if (!condition()) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        resolve(false);
      }, timeoutMs);
      this.listeners.add(check);
    });
  }
}

describe('drainPods', () => {
  it('evicts the pods one at a time under maxUnavailable 1, each after the last replacement turned ready', async () => {
    const app = new FakeDeployment(3, { maxUnavailable: 1 });
    const draining = drainPods(app, app.podNames(), 10_000);
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      // Only one eviction may have happened since the last replacement turned ready.
      expect(app.starting).toHaveLength(1);
      app.becomeReady();
    }
    const lines = await draining;
    expect(lines).toHaveLength(3);
    expect(app.fewestReady).toBe(2);
    expect(app.podNames().every((name) => !['app-0', 'app-1', 'app-2'].includes(name))).toBe(true);
  });

  it('evicts two at once where the budget allows two', async () => {
    const app = new FakeDeployment(4, { maxUnavailable: 2 });
    const draining = drainPods(app, app.podNames(), 10_000);
    await new Promise((resolve) => setImmediate(resolve));
    expect(app.starting).toHaveLength(2);
    for (let i = 0; i < 4; i++) {
      app.becomeReady();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await draining;
    expect(app.fewestReady).toBe(2);
  });

  it('gives up at the bound, naming the budget, when no replacement turns ready', async () => {
    const app = new FakeDeployment(2, { minAvailable: 1 });
    const refused = await refusal(drainPods(app, app.podNames(), 300));
    expect(refused).toMatchObject({ code: 'FAILED_PRECONDITION', reason: PodRunnerReason.DISRUPTION_BUDGET });
    expect(refused.message).toContain('PodDisruptionBudget pdb');
    // The first eviction happened; the second never did.
    expect(app.starting).toHaveLength(1);
    expect(app.fewestReady).toBe(1);
  });
});
