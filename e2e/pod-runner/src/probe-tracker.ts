import type { Probe } from './manifests.js';

/** A probe's settings with the kubelet's defaults filled in, in milliseconds. */
export interface ProbeTiming {
  initialDelayMs: number;
  periodMs: number;
  timeoutMs: number;
  successThreshold: number;
  failureThreshold: number;
}

/** The kubelet's defaults: no delay, every 10 s, 1 s timeout, 1 success, 3 failures. */
export function probeTiming(probe: Probe): ProbeTiming {
  return {
    initialDelayMs: (probe.initialDelaySeconds ?? 0) * 1000,
    periodMs: (probe.periodSeconds ?? 10) * 1000,
    timeoutMs: (probe.timeoutSeconds ?? 1) * 1000,
    successThreshold: probe.successThreshold ?? 1,
    failureThreshold: probe.failureThreshold ?? 3,
  };
}

/** What a probe's results say: `success` or `failure` once a threshold is crossed, else unchanged. */
export type ProbeVerdict = 'success' | 'failure' | 'unchanged';

/**
 * Consecutive results against the thresholds, as the kubelet counts them: a
 * verdict flips only after successThreshold successes or failureThreshold
 * failures in a row, and a result of the other kind starts the count over.
 */
export class ProbeTracker {
  private successes = 0;
  private failures = 0;
  private state: 'success' | 'failure' | 'unknown' = 'unknown';

  constructor(private readonly timing: Pick<ProbeTiming, 'successThreshold' | 'failureThreshold'>) {}

  get current(): 'success' | 'failure' | 'unknown' {
    return this.state;
  }

  record(ok: boolean): ProbeVerdict {
    if (ok) {
      this.failures = 0;
      this.successes++;
      if (this.state !== 'success' && this.successes >= this.timing.successThreshold) {
        this.state = 'success';
        return 'success';
      }
    } else {
      this.successes = 0;
      this.failures++;
      if (this.state !== 'failure' && this.failures >= this.timing.failureThreshold) {
        this.state = 'failure';
        return 'failure';
      }
    }
    return 'unchanged';
  }

  /** A restarted container starts unknown again. */
  reset(): void {
    this.successes = 0;
    this.failures = 0;
    this.state = 'unknown';
  }
}

/**
 * How much later than its timeout a failed probe may end before its failure
 * is put down to the runner rather than the pod. Every probe is bounded by
 * its timeout (a deadline, a socket timeout, a kill), so one that ends a
 * second or more past it ran on an event loop that was busy elsewhere: the
 * runner shares its process with whoever drives the pods, where the kubelet
 * has a process of its own.
 */
export const PROBE_LATE_MS = 1_000;

/**
 * Keeps a probe's failures that came from the runner's own lateness out of
 * the count, at most failureThreshold in a row: a pod that stays unreachable
 * while the runner stays late still fails its probe, one period later for
 * every result set aside.
 */
export class LateProbeFilter {
  private setAsideInRow = 0;

  constructor(private readonly timing: Pick<ProbeTiming, 'timeoutMs' | 'failureThreshold'>) {}

  /** True when this result should be counted; false when it is set aside as the runner's lateness. */
  counts(ok: boolean, elapsedMs: number): boolean {
    const late = !ok && elapsedMs >= this.timing.timeoutMs + PROBE_LATE_MS;
    if (late && this.setAsideInRow < this.timing.failureThreshold) {
      this.setAsideInRow++;
      return false;
    }
    this.setAsideInRow = 0;
    return true;
  }
}

/**
 * The kubelet's restart back-off (restartPolicy Always) before restart number
 * `restarts` (1 = the first): the first at once, then 10 s doubling to 5 minutes.
 */
export function restartBackoffMs(restarts: number): number {
  if (restarts <= 1) return 0;
  return Math.min(10_000 * 2 ** (restarts - 2), 300_000);
}
