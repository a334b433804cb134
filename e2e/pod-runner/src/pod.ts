import { spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { LedgerlineError } from '@ledgerline/errors';
import { containerProcess } from './container-command.js';
import { containerEnv } from './container-env.js';
import { CLUSTER_NAMESPACE, type PodEndpoint } from './hosts-file.js';
import type { Container, Manifests, PodSpec } from './manifests.js';
import { createPodNetwork, removePodNetwork } from './network.js';
import { PodRunnerReason } from './reasons.js';
import { RunningContainer } from './running-container.js';

/** Kubernetes' default terminationGracePeriodSeconds. */
const DEFAULT_GRACE_SECONDS = 30;

/** Everything a pod is made from. */
export interface PodPlan {
  name: string;
  netns: string;
  veth: string;
  bridge: string;
  ip: string;
  labels: Record<string, string>;
  owner: { kind: 'Deployment' | 'StatefulSet' | 'Client'; name: string };
  /** The template revision a rollout tells old pods from new ones by. */
  revision: string;
  subdomain?: string;
  spec: PodSpec;
  /** The StatefulSet's volume claims: kept across the pod's deletion, named `<claim>-<pod>`. */
  claims: readonly string[];
  manifests: Manifests;
  root: string;
  runDir: string;
}

export interface PodEvents {
  readinessChanged(pod: Pod): void;
  log(line: string): void;
}

/** Runs `command` in the pod's network namespace and resolves when it exits (a preStop hook). */
function execInPod(netns: string, command: readonly string[], env: Record<string, string>): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn('ip', ['netns', 'exec', netns, ...command], { stdio: 'ignore', env, detached: true });
    child.once('error', () => resolve());
    child.once('exit', () => resolve());
  });
}

/** A pod: a network namespace with its address, and its containers. */
export class Pod {
  readonly containers: RunningContainer[] = [];
  readonly createdAtMs = Date.now();
  terminating = false;
  private deletion: Promise<string[]> | undefined;

  private constructor(
    readonly plan: PodPlan,
    private readonly events: PodEvents,
  ) {}

  get name(): string {
    return this.plan.name;
  }

  get ip(): string {
    return this.plan.ip;
  }

  get ready(): boolean {
    return !this.terminating && this.containers.length > 0 && this.containers.every((c) => c.isReady);
  }

  get restarts(): number {
    return this.containers.reduce((sum, container) => sum + container.restarts, 0);
  }

  endpoint(): PodEndpoint {
    return {
      name: this.name,
      ip: this.ip,
      labels: this.plan.labels,
      ready: this.ready,
      terminating: this.terminating,
      ...(this.plan.subdomain === undefined ? {} : { subdomain: this.plan.subdomain }),
    };
  }

  /** Makes the namespace and starts every container; a pod that cannot start leaves nothing behind. */
  static async create(plan: PodPlan, events: PodEvents): Promise<Pod> {
    const pod = new Pod(plan, events);
    await createPodNetwork(plan.netns, plan.veth, plan.bridge, plan.ip);
    try {
      mkdirSync(pod.folder('logs'), { recursive: true });
      const built = plan.spec.containers.map((container) => pod.build(container));
      pod.containers.push(...built);
    } catch (error) {
      await removePodNetwork(plan.netns, plan.veth);
      rmSync(pod.folder(), { recursive: true, force: true });
      throw error;
    }
    for (const container of pod.containers) container.start();
    return pod;
  }

  private folder(...parts: string[]): string {
    return join(this.plan.runDir, 'pods', this.name, ...parts);
  }

  private mounts(container: Container): Map<string, string> {
    const mounts = new Map<string, string>();
    for (const mount of container.volumeMounts ?? []) {
      const volume = this.plan.spec.volumes?.find((candidate) => candidate.name === mount.name);
      let folder: string;
      if (this.plan.claims.includes(mount.name))
        folder = join(this.plan.runDir, 'claims', `${mount.name}-${this.name}`);
      else if (volume?.emptyDir !== undefined) folder = this.folder('volumes', mount.name);
      else {
        throw new LedgerlineError(
          'FAILED_PRECONDITION',
          PodRunnerReason.BAD_MANIFEST,
          `pod ${this.name}: volume ${mount.name} is neither an emptyDir nor a volume claim (the runner provides those)`,
        );
      }
      mkdirSync(folder, { recursive: true });
      mounts.set(mount.mountPath, folder);
    }
    return mounts;
  }

  private build(container: Container): RunningContainer {
    const fields = { name: this.name, namespace: CLUSTER_NAMESPACE, podIP: this.ip, labels: this.plan.labels };
    const env = containerEnv(container, this.plan.manifests, fields);
    const process = containerProcess(container, { root: this.plan.root, env, mounts: this.mounts(container) });
    this.events.log(`pod ${this.name} (${this.ip}) container ${container.name}: ${process.describe}`);
    return new RunningContainer(
      container,
      process,
      { podIP: this.ip, netns: this.plan.netns, container, env },
      this.folder('logs', `${container.name}.log`),
      {
        readinessChanged: () => this.events.readinessChanged(this),
        log: (line) => this.events.log(`pod ${this.name}: ${line}`),
        preStop: () => this.preStop(container),
        graceMs: this.graceMs,
      },
    );
  }

  /**
   * Deletes the pod as Kubernetes does: it leaves its Services at once, each
   * container runs its preStop hook, gets SIGTERM, and SIGKILL when
   * terminationGracePeriodSeconds (counted from the deletion) runs out; then
   * the namespace goes. Resolves with how each container left.
   */
  delete(): Promise<string[]> {
    this.deletion ??= this.terminate();
    return this.deletion;
  }

  private get graceMs(): number {
    return (this.plan.spec.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS) * 1000;
  }

  private async terminate(): Promise<string[]> {
    this.terminating = true;
    this.events.readinessChanged(this);
    const deadlineMs = Date.now() + this.graceMs;
    const outcomes = await Promise.all(this.containers.map((container) => container.terminate(deadlineMs)));
    await removePodNetwork(this.plan.netns, this.plan.veth);
    rmSync(this.folder('volumes'), { recursive: true, force: true });
    return outcomes;
  }

  private async preStop(container: Container): Promise<void> {
    const hook = container.lifecycle?.preStop;
    if (hook?.sleep !== undefined) await new Promise((resolve) => setTimeout(resolve, hook.sleep!.seconds * 1000));
    else if (hook?.exec !== undefined)
      await execInPod(this.plan.netns, hook.exec.command, { PATH: process.env['PATH'] ?? '' });
  }
}
