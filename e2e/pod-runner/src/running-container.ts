import { spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { ChildProcessGroup } from '@ledgerline/cluster';
import type { ContainerProcess } from './container-command.js';
import type { Container, Probe } from './manifests.js';
import { runProbe, type ProbeTarget } from './probe-checks.js';
import { LateProbeFilter, ProbeTracker, probeTiming, restartBackoffMs } from './probe-tracker.js';

/** What a container tells its pod. */
export interface ContainerEvents {
  readinessChanged(): void;
  log(line: string): void;
  /** The container's preStop hook (resolves at once without one). */
  preStop(): Promise<void>;
  /** The pod's terminationGracePeriodSeconds, in ms: what a kill for a failed probe allows too. */
  graceMs: number;
}

/** PATH inside a pod: nats-server is in /usr/sbin on Debian. */
const POD_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Resolves after `ms`, or at once when `signal` aborts (so no timer outlives a stop). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}

/**
 * One container of a pod as the kubelet runs it: the process inside the
 * pod's network namespace, its startup, liveness and readiness probes, a
 * restart (with back-off) when it exits or liveness fails, and termination
 * with preStop, SIGTERM and SIGKILL at the grace period's end.
 */
export class RunningContainer {
  restarts = 0;
  private group: ChildProcessGroup | undefined;
  private ready = false;
  private life = new AbortController();
  private terminating = false;
  private readonly logFile: WriteStream;
  /** The stop under way or done, by the process it stops. */
  private stopping: { group: ChildProcessGroup | undefined; outcome: Promise<string> } | undefined;

  constructor(
    readonly spec: Container,
    private readonly process: ContainerProcess,
    private readonly target: ProbeTarget,
    logPath: string,
    private readonly events: ContainerEvents,
  ) {
    this.logFile = createWriteStream(logPath, { flags: 'a' });
  }

  get isReady(): boolean {
    return this.ready && !this.terminating;
  }

  get pid(): number | undefined {
    return this.group?.running === true ? this.group.pid : undefined;
  }

  get output(): string {
    return this.group?.output ?? '';
  }

  start(): void {
    const life = new AbortController();
    this.life = life;
    const { command, args, cwd } = this.process;
    const env = { PATH: POD_PATH, HOSTNAME: this.target.netns, ...this.target.env };
    const child = spawn('ip', ['netns', 'exec', this.target.netns, command, ...args], {
      cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (chunk: Buffer) => this.log(chunk));
    child.stderr.on('data', (chunk: Buffer) => this.log(chunk));
    const group = new ChildProcessGroup(this.spec.name, child);
    this.group = group;
    group.exited.then(
      ({ code, signal }) => {
        if (life.signal.aborted) return;
        // Its last line says why, as `kubectl logs --previous` would.
        const last = group.output.trimEnd().split('\n').at(-1) ?? '';
        this.events.log(`container ${this.spec.name} exited (${signal ?? `status ${code}`})${last ? `: ${last}` : ''}`);
        this.background(this.restart('exited'));
      },
      () => undefined,
    );
    this.background(this.probeLoops(life.signal));
  }

  /**
   * Output reaches the pipe after the process has exited, so the last of it
   * can come once terminate() closed the file: that much is dropped, not
   * written after the end (which throws).
   */
  private log(chunk: Buffer): void {
    if (!this.logFile.writableEnded) this.logFile.write(chunk);
  }

  private async probeLoops(signal: AbortSignal): Promise<void> {
    const { startupProbe, livenessProbe, readinessProbe } = this.spec;
    if (startupProbe !== undefined) {
      const started = await this.probeLoop(startupProbe, signal, 'startup');
      if (!started) return;
    }
    if (livenessProbe !== undefined) this.background(this.probeLoop(livenessProbe, signal, 'liveness'));
    if (readinessProbe !== undefined) this.background(this.probeLoop(readinessProbe, signal, 'readiness'));
    else this.setReady(true);
  }

  /** Runs one probe until its container stops; the startup probe ends (true) at its first verdict of success. */
  private async probeLoop(
    probe: Probe,
    signal: AbortSignal,
    kind: 'startup' | 'liveness' | 'readiness',
  ): Promise<boolean> {
    const timing = probeTiming(probe);
    const tracker = new ProbeTracker(kind === 'readiness' ? timing : { ...timing, successThreshold: 1 });
    const lateness = new LateProbeFilter(timing);
    await sleep(timing.initialDelayMs, signal);
    while (!signal.aborted) {
      const startedMs = performance.now();
      const ok = await runProbe(probe, this.target, timing.timeoutMs).catch(() => false);
      if (signal.aborted) break;
      const elapsedMs = Math.round(performance.now() - startedMs);
      const counted = lateness.counts(ok, elapsedMs);
      // A start-up probe fails until the process listens: only the others' failures say something.
      if (!ok && kind !== 'startup') {
        this.events.log(
          `container ${this.spec.name}: ${kind} probe failed after ${elapsedMs} ms` +
            (counted ? '' : ` (set aside: past its ${timing.timeoutMs} ms timeout, the runner was late, not the pod)`),
        );
      }
      const verdict = counted ? tracker.record(ok) : 'unchanged';
      if (kind === 'readiness' && verdict !== 'unchanged') this.setReady(verdict === 'success');
      if (kind === 'startup' && verdict === 'success') return true;
      if (kind !== 'readiness' && verdict === 'failure') {
        this.events.log(
          `container ${this.spec.name}: ${kind} probe failed ${timing.failureThreshold} times, restarting`,
        );
        this.background(this.restart(`${kind} probe failed`, true));
        return false;
      }
      await sleep(timing.periodMs, signal);
    }
    return false;
  }

  /** Work that runs beside the container; a failure of it is logged, never left unhandled. */
  private background(work: Promise<unknown>): void {
    work.catch((error: unknown) => this.events.log(`container ${this.spec.name}: ${String(error)}`));
  }

  private setReady(ready: boolean): void {
    if (this.ready === ready) return;
    this.ready = ready;
    this.events.log(`container ${this.spec.name} ${ready ? 'ready' : 'not ready'}`);
    this.events.readinessChanged();
  }

  /**
   * Starts the process again after the back-off, unless the pod is
   * terminating. A process killed for a failed probe is stopped as the
   * kubelet does: preStop, SIGTERM, SIGKILL at the grace period.
   */
  private async restart(why: string, kill = false): Promise<void> {
    if (this.terminating) return;
    const life = this.life;
    life.abort();
    this.setReady(false);
    if (kill) await this.stopGracefully(Date.now() + this.events.graceMs);
    else await this.group?.stop('SIGKILL', 10_000);
    if (this.terminating) return;
    this.restarts++;
    const backoff = new AbortController();
    this.life = backoff;
    await sleep(restartBackoffMs(this.restarts), backoff.signal);
    if (this.terminating || backoff.signal.aborted) return;
    this.events.log(`container ${this.spec.name} restarting (${why}, restart ${this.restarts})`);
    this.start();
  }

  /**
   * Kubernetes' termination: out of the endpoints at once, preStop (bounded
   * by the grace period), SIGTERM, then SIGKILL when the grace period ends.
   * Resolves with how the process left.
   */
  async terminate(deadlineMs: number): Promise<string> {
    this.terminating = true;
    this.life.abort();
    this.setReady(false);
    const outcome = await this.stopGracefully(deadlineMs);
    await new Promise<void>((resolve) => this.logFile.end(resolve));
    return outcome;
  }

  /**
   * preStop (bounded by the deadline), SIGTERM, then SIGKILL at the deadline;
   * how the process left. A stop already under way (a kill for a failed probe
   * when the pod is deleted) is the one waited for: preStop runs once.
   */
  private stopGracefully(deadlineMs: number): Promise<string> {
    const group = this.group;
    const under = this.stopping;
    if (under !== undefined && under.group === group) return under.outcome;
    const outcome = this.stopGroup(group, deadlineMs);
    this.stopping = { group, outcome };
    return outcome;
  }

  private async stopGroup(group: ChildProcessGroup | undefined, deadlineMs: number): Promise<string> {
    if (group?.running !== true) return 'not running';
    const preStopBound = new AbortController();
    await Promise.race([this.events.preStop(), sleep(Math.max(0, deadlineMs - Date.now()), preStopBound.signal)]);
    preStopBound.abort();
    const clean = await group.stop('SIGTERM', Math.max(0, deadlineMs - Date.now()));
    const { code, signal } = await group.exited;
    return clean ? `exited ${signal ?? `status ${code}`}` : 'killed at the grace period (SIGKILL)';
  }
}
