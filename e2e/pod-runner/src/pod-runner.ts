import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ChildProcessGroup, findRepositoryRoot } from '@ledgerline/cluster';
import { LedgerlineError } from '@ledgerline/errors';
import { hostsFile } from './hosts-file.js';
import { renderOverlay, selects, type Manifests, type Service, type Workload } from './manifests.js';
import { DEV_OVERLAY, runnableManifests } from './overlay-references.js';
import { drainPods } from './disruption.js';
import { createBridge, ip, pickSubnet, removeBlackhole, removeByPrefix, writeHostsFile } from './network.js';
import { Pod } from './pod.js';
import { PodRunnerReason } from './reasons.js';
import { newRunPrefix, registerRun, sweepStaleRuns, unregisterRun } from './run-registry.js';
import { cutOff, type Cut } from './partitions.js';
import { rollDeployment, rollStatefulSet, waitFor } from './rollout.js';
import { RecentEvents } from './recent-events.js';
import { ServiceProxy } from './service-proxy.js';

/** How long `up` waits for every pod to be ready. */
export const UP_TIMEOUT_MS = 180_000;
/** Addresses .2 to .254 of the run's /24 (.1 is the node's, on the bridge). */
const MAX_PODS = 253;

export interface PodRunnerOptions {
  /** An overlay folder for `kubectl kustomize`. */
  overlay?: string;
  /** Already rendered YAML (instead of an overlay). */
  yaml?: string;
  /** Where logs, volumes and the state go; a fresh folder under /tmp by default. */
  runDir?: string;
  root?: string;
  log?: (line: string) => void;
  upTimeoutMs?: number;
  /** False: `up` returns once every pod is made, ready or not (a test of pods that never get ready). */
  waitForReady?: boolean;
}

/** One row of what the `pods` command lists. */
export interface PodStatus {
  name: string;
  owner: string;
  ip: string;
  ready: boolean;
  terminating: boolean;
  restarts: number;
  pids: number[];
}

/** The rendered manifests run as pods here: docs/architecture.md ("Pods without Kubernetes"), the README. */
export class PodRunner {
  readonly pods = new Map<string, Pod>();
  readonly replicas = new Map<string, number>();
  readonly revisions = new Map<string, string>();
  private readonly cuts: Cut[] = [];
  /** Each Service with a cluster IP (not headless): its proxy on the bridge. */
  readonly proxies = new Map<string, ServiceProxy>();
  private readonly addresses = new Set<string>();
  private nextVeth = 0;
  private readonly exitCleanup = (): void => removeByPrefix(this.prefix);
  private stopped = false;
  private readonly readinessListeners = new Set<() => void>();

  private constructor(
    readonly manifests: Manifests,
    readonly prefix: string,
    readonly subnet: string,
    readonly runDir: string,
    readonly root: string,
    /** What the run logged lately, with times (printed when a spec fails). */
    readonly events: RecentEvents,
  ) {}

  get bridge(): string {
    return `${this.prefix}br`;
  }

  /** Renders, makes the bridge, starts every workload's pods and waits until all are ready (else removes everything). */
  static async up(options: PodRunnerOptions): Promise<PodRunner> {
    const manifests = runnableManifests(options.yaml ?? (await renderOverlay(resolve(options.overlay ?? DEV_OVERLAY))));
    for (const swept of sweepStaleRuns()) options.log?.(`removed what the gone run ${swept} left behind`);
    const prefix = newRunPrefix();
    const runDir = options.runDir ?? join('/tmp/ledgerline-pods', prefix);
    mkdirSync(runDir, { recursive: true });
    registerRun({ prefix, pid: process.pid, runDir, startedAt: new Date().toISOString() });
    const runner = new PodRunner(
      manifests,
      prefix,
      await pickSubnet(prefix),
      runDir,
      options.root ?? findRepositoryRoot(),
      new RecentEvents(options.log),
    );
    process.once('exit', runner.exitCleanup);
    try {
      await createBridge(runner.bridge, runner.subnet);
      await runner.startProxies();
      await runner.startWorkloads(options.upTimeoutMs ?? UP_TIMEOUT_MS, options.waitForReady ?? true);
    } catch (error) {
      await runner.down();
      throw error;
    }
    return runner;
  }

  /** One deadline for the whole of `up`: each StatefulSet pod waits only for what is left of it. */
  private async startWorkloads(timeoutMs: number, waitForReady: boolean): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const left = (): number => Math.max(0, deadline - Date.now());
    const statefulSets: Promise<void>[] = [];
    for (const workload of this.manifests.workloads) {
      this.replicas.set(workload.metadata.name, workload.spec.replicas ?? 1);
      this.revisions.set(workload.metadata.name, randomBytes(4).toString('hex'));
      if (workload.kind === 'Deployment') await this.addDeploymentPods(workload, workload.spec.replicas ?? 1);
      // OrderedReady: each StatefulSet pod is ready before the next is made.
      else statefulSets.push(this.startStatefulSet(workload, left, waitForReady ? timeoutMs : undefined));
    }
    await Promise.all(statefulSets);
    if (!waitForReady) return;
    const ready = await this.waitUntil(() => [...this.pods.values()].every((pod) => pod.ready), left());
    if (!ready) throw this.notReadyError(timeoutMs);
  }

  private notReadyError(timeoutMs: number): LedgerlineError {
    const late = [...this.pods.values()].filter((pod) => !pod.ready);
    const detail = late.map((pod) => `${pod.name}: ${pod.containers.map((c) => c.output.slice(-400)).join(' | ')}`);
    return new LedgerlineError(
      'UNAVAILABLE',
      PodRunnerReason.ROLLOUT_STUCK,
      `pods not ready within ${timeoutMs} ms: ${detail.join('\n')}`,
    );
  }

  /** OrderedReady; with `timeoutMs` (waiting for ready), a pod not ready by the deadline ends the start. */
  private async startStatefulSet(workload: Workload, left: () => number, timeoutMs?: number): Promise<void> {
    const replicas = this.replicas.get(workload.metadata.name)!;
    for (let ordinal = 0; ordinal < replicas; ordinal++) {
      const pod = await this.createPod(workload, `${workload.metadata.name}-${ordinal}`);
      const ready = await this.waitUntil(() => pod.ready, left());
      if (!ready && timeoutMs !== undefined) throw this.notReadyError(timeoutMs);
    }
  }

  workload(name: string): Workload {
    const workload = this.manifests.workloads.find((candidate) => candidate.metadata.name === name);
    if (workload === undefined) {
      throw new LedgerlineError('NOT_FOUND', PodRunnerReason.NO_SUCH_OBJECT, `no Deployment or StatefulSet ${name}`);
    }
    return workload;
  }

  pod(name: string): Pod {
    const pod = this.pods.get(name);
    if (pod === undefined) throw new LedgerlineError('NOT_FOUND', PodRunnerReason.NO_SUCH_OBJECT, `no pod ${name}`);
    return pod;
  }

  /** The pods (not terminating) a workload owns; with `revision`, only those of that template revision. */
  podsOf(name: string, revision?: string): Pod[] {
    return [...this.pods.values()].filter(
      (pod) =>
        pod.plan.owner.name === name && !pod.terminating && (revision === undefined || pod.plan.revision === revision),
    );
  }

  async addDeploymentPods(workload: Workload, count: number): Promise<Pod[]> {
    const revision = this.revisions.get(workload.metadata.name)!;
    const made: Pod[] = [];
    for (let index = 0; index < count; index++) {
      const name = `${workload.metadata.name}-${revision}-${randomBytes(3).toString('hex').slice(0, 5)}`;
      made.push(await this.createPod(workload, name));
    }
    return made;
  }

  /** Cluster IPs from the top of the run's /24 down, one per Service that is not headless. */
  private async startProxies(): Promise<void> {
    let host = 254;
    for (const service of this.manifests.services) {
      if (service.spec.clusterIP === 'None' || service.spec.selector === undefined) continue;
      const clusterIP = `${this.subnet}.${host--}`;
      this.addresses.add(clusterIP);
      const proxy = await ServiceProxy.start(service, clusterIP, this);
      this.proxies.set(service.metadata.name, proxy);
    }
  }

  /** The ready, not terminating pods a Service selects. */
  endpointsOf(service: Service): Pod[] {
    return [...this.pods.values()].filter((pod) => pod.ready && selects(service.spec.selector, pod.plan.labels));
  }

  /** Takes the lowest free address; it is the pod's until the pod is gone (see forget). */
  private takeAddress(): string {
    for (let host = 2; host < 2 + MAX_PODS; host++) {
      const address = `${this.subnet}.${host}`;
      if (!this.addresses.has(address)) {
        this.addresses.add(address);
        return address;
      }
    }
    throw new LedgerlineError('RESOURCE_EXHAUSTED', PodRunnerReason.NETWORK_FAILED, `more than ${MAX_PODS} pods`);
  }

  /** Makes one pod of `workload` (or a client pod with no containers when `workload` is undefined). */
  async createPod(workload: Workload | undefined, name: string): Promise<Pod> {
    if (this.stopped) throw new LedgerlineError('FAILED_PRECONDITION', PodRunnerReason.NO_RUNNER, 'the run is down');
    const template = workload?.spec.template;
    const subdomain = workload === undefined ? undefined : this.governingService(workload);
    const address = this.takeAddress();
    const pod = await Pod.create(
      {
        name,
        netns: `${this.prefix}-${name}`,
        veth: `${this.prefix}v${this.nextVeth++}`,
        bridge: this.bridge,
        ip: address,
        labels: { ...(template?.metadata.labels ?? {}) },
        owner:
          workload === undefined ? { kind: 'Client', name } : { kind: workload.kind, name: workload.metadata.name },
        revision: workload === undefined ? '' : this.revisions.get(workload.metadata.name)!,
        ...(subdomain === undefined ? {} : { subdomain }),
        spec: template?.spec ?? { containers: [] },
        claims: (workload?.spec.volumeClaimTemplates ?? []).map((claim) => claim.metadata.name),
        manifests: this.manifests,
        root: this.root,
        runDir: this.runDir,
      },
      { readinessChanged: () => this.refreshHosts(), log: this.events.log },
    ).catch((error: unknown) => {
      this.addresses.delete(address);
      throw error;
    });
    this.pods.set(name, pod);
    this.refreshHosts();
    return pod;
  }

  /**
   * A StatefulSet pod's DNS name `<pod>.<serviceName>` exists only when its
   * governing Service is headless (clusterIP: None), as Kubernetes' DNS
   * gives it; with any other Service the name does not resolve.
   */
  private governingService(workload: Workload): string | undefined {
    if (workload.kind !== 'StatefulSet' || workload.spec.serviceName === undefined) return undefined;
    const service = this.manifests.services.find((candidate) => candidate.metadata.name === workload.spec.serviceName);
    if (service?.spec.clusterIP !== 'None') {
      this.events.log(
        `StatefulSet ${workload.metadata.name}: Service ${workload.spec.serviceName} is not headless, so its pods get no DNS names`,
      );
      return undefined;
    }
    return service.metadata.name;
  }

  /** A namespace of the run's with no containers, whose hosts file resolves the Services like every pod's. */
  addClientPod(name: string): Promise<Pod> {
    return this.createPod(undefined, name);
  }

  /** Starts `command` inside a pod's network namespace (a client in a client pod, a check in a service pod). */
  exec(podName: string, command: string, args: readonly string[], env: Record<string, string> = {}): ChildProcessGroup {
    const pod = this.pod(podName);
    return ChildProcessGroup.spawn(`${podName}:${command}`, 'ip', ['netns', 'exec', pod.plan.netns, command, ...args], {
      cwd: this.root,
      env: { ...process.env, ...env },
    });
  }

  /** Rewrites every pod's hosts file from the pods' readiness now (the endpoints controller and DNS in one). */
  refreshHosts(): void {
    const endpoints = [...this.pods.values()].map((pod) => pod.endpoint());
    const clusterIPs = this.clusterIPs();
    for (const pod of this.pods.values()) {
      if (pod.terminating) continue;
      try {
        writeHostsFile(
          pod.plan.netns,
          hostsFile({ name: pod.name, ip: pod.ip }, this.manifests.services, endpoints, clusterIPs),
        );
      } catch {
        // The namespace is being removed.
      }
    }
    for (const listener of this.readinessListeners) listener();
  }

  private clusterIPs(): Map<string, string> {
    return new Map([...this.proxies].map(([name, proxy]) => [name, proxy.clusterIP]));
  }

  /** Resolves true once `condition` holds (checked on every readiness change and each second), false at the bound. */
  waitUntil(condition: () => boolean, timeoutMs: number): Promise<boolean> {
    return waitFor(condition, timeoutMs, this.readinessListeners);
  }

  async deletePod(name: string): Promise<string[]> {
    const pod = this.pod(name);
    const deleting = pod.delete();
    const owner = pod.plan.owner;
    // The ReplicaSet replaces a deleted pod at once; a StatefulSet makes the same name again once it is gone.
    if (owner.kind === 'Deployment' && !this.stopped) {
      const missing = this.replicas.get(owner.name)! - this.podsOf(owner.name).length;
      if (missing > 0) await this.addDeploymentPods(this.workload(owner.name), missing);
    }
    const outcomes = await deleting;
    this.forget(pod);
    if (owner.kind === 'StatefulSet' && !this.stopped) await this.createPod(this.workload(owner.name), name);
    return outcomes;
  }

  /** `kubectl drain` of the pods named, honouring PodDisruptionBudgets (disruption.ts). */
  drain(names: readonly string[], timeoutMs = 300_000): Promise<string[]> {
    return drainPods(this, names, timeoutMs);
  }

  /** Sets a workload's replicas: new pods, or deletions of the not-ready first, then the newest. */
  async scale(name: string, replicas: number): Promise<void> {
    const workload = this.workload(name);
    this.replicas.set(name, replicas);
    const current = this.podsOf(name);
    if (current.length < replicas && workload.kind === 'Deployment') {
      await this.addDeploymentPods(workload, replicas - current.length);
    } else if (current.length < replicas) {
      for (let ordinal = current.length; ordinal < replicas; ordinal++)
        await this.createPod(workload, `${name}-${ordinal}`);
    }
    const extra = current
      .sort(
        (a, b) => Number(a.ready) - Number(b.ready) || b.createdAtMs - a.createdAtMs || b.name.localeCompare(a.name),
      )
      .slice(0, Math.max(0, current.length - replicas));
    await Promise.all(extra.map((pod) => this.removePod(pod)));
  }

  /** Deletes a pod without a replacement (scaling down, rollouts). */
  async removePod(pod: Pod): Promise<void> {
    await pod.delete();
    this.forget(pod);
  }

  /** A deleted pod's name and address are free again. */
  private forget(pod: Pod): void {
    if (this.pods.get(pod.name) === pod) this.pods.delete(pod.name);
    this.addresses.delete(pod.ip);
    this.refreshHosts();
  }

  /** `kubectl rollout restart`: a new template revision rolled out by the workload's strategy. */
  async rolloutRestart(name: string, timeoutMs = 600_000): Promise<void> {
    const workload = this.workload(name);
    this.revisions.set(name, randomBytes(4).toString('hex'));
    if (workload.kind === 'Deployment') await rollDeployment(this, workload, timeoutMs);
    else await rollStatefulSet(this, workload, timeoutMs);
  }

  /** Cuts `podName` off from each of `from` (pods or Services) both ways; see partitions.ts. */
  async partition(podName: string, from: readonly string[]): Promise<Cut[]> {
    const made = await cutOff(this, this.pod(podName), from, this.proxies);
    this.cuts.push(...made);
    return made;
  }

  /** Takes out every cut the run made. */
  async heal(): Promise<number> {
    const cuts = this.cuts.splice(0);
    for (const cut of cuts) await removeBlackhole(cut.netns, cut.address);
    return cuts.length;
  }

  status(): PodStatus[] {
    return [...this.pods.values()].map((pod) => ({
      name: pod.name,
      owner: `${pod.plan.owner.kind}/${pod.plan.owner.name}`,
      ip: pod.ip,
      ready: pod.ready,
      terminating: pod.terminating,
      restarts: pod.restarts,
      pids: pod.containers.flatMap((container) => (container.pid === undefined ? [] : [container.pid])),
    }));
  }

  /** Deletes every pod (Deployments first, then the StatefulSets they use), then removes everything the run made. */
  async down(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const pods = [...this.pods.values()];
    const first = pods.filter((pod) => pod.plan.owner.kind !== 'StatefulSet');
    await Promise.all(first.map((pod) => pod.delete().catch(() => [])));
    await Promise.all(pods.map((pod) => pod.delete().catch(() => [])));
    this.pods.clear();
    await Promise.all([...this.proxies.values()].map((proxy) => proxy.stop()));
    this.proxies.clear();
    await ip(['link', 'del', this.bridge]).catch(() => undefined);
    removeByPrefix(this.prefix);
    rmSync(join(this.runDir, 'claims'), { recursive: true, force: true });
    unregisterRun(this.prefix);
    process.off('exit', this.exitCleanup);
    this.readinessListeners.clear();
  }
}
