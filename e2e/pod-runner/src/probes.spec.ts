import { LedgerlineError } from '@ledgerline/errors';
import type { Workload } from './manifests.js';
import { LateProbeFilter, ProbeTracker, probeTiming, restartBackoffMs } from './probe-tracker.js';
import { rollingBounds, rollingStep } from './rollout.js';

describe('probe thresholds as the kubelet counts them', () => {
  it('fills in the kubelet defaults', () => {
    expect(probeTiming({ grpc: { port: 6650 } })).toEqual({
      initialDelayMs: 0,
      periodMs: 10_000,
      timeoutMs: 1_000,
      successThreshold: 1,
      failureThreshold: 3,
    });
  });

  it('fails only after failureThreshold failures in a row, and a success starts the count over', () => {
    const tracker = new ProbeTracker({ successThreshold: 1, failureThreshold: 3 });
    expect(tracker.record(true)).toBe('success');
    expect([tracker.record(false), tracker.record(false), tracker.record(true)]).toEqual([
      'unchanged',
      'unchanged',
      'unchanged',
    ]);
    expect([tracker.record(false), tracker.record(false), tracker.record(false)]).toEqual([
      'unchanged',
      'unchanged',
      'failure',
    ]);
    expect(tracker.record(false)).toBe('unchanged');
    expect(tracker.current).toBe('failure');
  });

  it('needs successThreshold successes in a row to turn ready again', () => {
    const tracker = new ProbeTracker({ successThreshold: 2, failureThreshold: 1 });
    expect(tracker.record(false)).toBe('failure');
    expect(tracker.record(true)).toBe('unchanged');
    expect(tracker.record(false)).toBe('unchanged');
    expect(tracker.record(true)).toBe('unchanged');
    expect(tracker.record(true)).toBe('success');
  });

  it('sets aside a failure that ended well past its timeout (the runner was late), at most failureThreshold in a row', () => {
    const filter = new LateProbeFilter({ timeoutMs: 1_000, failureThreshold: 2 });
    // On time, or failed fast (refused): counted.
    expect([filter.counts(false, 1_000), filter.counts(false, 3), filter.counts(true, 5_000)]).toEqual([
      true,
      true,
      true,
    ]);
    // Late: set aside twice, then counted however late, so a dead pod still fails while the runner stays late.
    expect([filter.counts(false, 2_000), filter.counts(false, 9_000), filter.counts(false, 2_500)]).toEqual([
      false,
      false,
      true,
    ]);
    // A counted result starts the allowance over.
    expect(filter.counts(false, 2_000)).toBe(false);
  });

  it('backs restarts off: the first at once, then 10 s doubling to 5 minutes', () => {
    expect([1, 2, 3, 4, 10].map(restartBackoffMs)).toEqual([0, 10_000, 20_000, 40_000, 300_000]);
  });
});

describe('rolling updates within maxSurge and maxUnavailable', () => {
  const deployment = (rollingUpdate?: { maxSurge?: number | string; maxUnavailable?: number | string }): Workload =>
    ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: {
        selector: {},
        strategy: rollingUpdate === undefined ? undefined : { rollingUpdate },
        template: { metadata: {}, spec: { containers: [] } },
      },
    }) as Workload;

  it('reads integers and percentages (surge up, unavailable down), 25% by default', () => {
    expect(rollingBounds(deployment({ maxSurge: 1, maxUnavailable: 0 }), 3)).toEqual({
      maxSurge: 1,
      maxUnavailable: 0,
    });
    expect(rollingBounds(deployment(), 3)).toEqual({ maxSurge: 1, maxUnavailable: 0 });
    expect(rollingBounds(deployment({ maxSurge: '50%', maxUnavailable: '50%' }), 3)).toEqual({
      maxSurge: 2,
      maxUnavailable: 1,
    });
    expect(() => rollingBounds(deployment({ maxSurge: 0, maxUnavailable: 0 }), 3)).toThrow(LedgerlineError);
  });

  it('with maxSurge 1 and maxUnavailable 0 makes one new pod, and deletes an old one only once it is ready', () => {
    const bounds = { maxSurge: 1, maxUnavailable: 0 };
    expect(rollingStep({ replicas: 1, oldPods: 1, newPods: 0, readyPods: 1 }, bounds)).toEqual({
      create: 1,
      remove: 0,
    });
    expect(rollingStep({ replicas: 1, oldPods: 1, newPods: 1, readyPods: 1 }, bounds)).toEqual({
      create: 0,
      remove: 0,
    });
    expect(rollingStep({ replicas: 1, oldPods: 1, newPods: 1, readyPods: 2 }, bounds)).toEqual({
      create: 0,
      remove: 1,
    });
  });

  it('with maxUnavailable 1 and no surge deletes first', () => {
    expect(
      rollingStep({ replicas: 3, oldPods: 3, newPods: 0, readyPods: 3 }, { maxSurge: 0, maxUnavailable: 1 }),
    ).toEqual({
      create: 0,
      remove: 1,
    });
  });
});
