import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLUSTER_ROLES, type ChildProcessGroup } from '@ledgerline/cluster';
import type { PodRunner } from '../pod-runner.js';

/** What the workload printed when it stopped (see pod-workload-main.ts). */
export interface WorkloadSummary {
  sent: number;
  acked: number;
  failed: number;
  firstFailures: string[];
  unconsumed: number;
  /** Messages delivered again after the owner had confirmed their ack persisted. */
  redeliveredAfterAck: number;
  consumerStops: string[];
  lastReceivedMsAgo: number;
  longestGapMs: number;
  stored: number;
  lost: number;
  duplicated: number;
  /** The first few payloads stored twice, each with both places (offset, ledger:entry). */
  storedTwice: string[];
  gaps: number;
  misplaced: number;
  /** Acks that show two owners acknowledging the topic at once (ack-owners.ts). */
  overlappingOwners: number;
}

/** One acknowledgement as the workload recorded it: what, where, when, and whether a resend was a duplicate. */
export interface AckRecord {
  payload: string;
  offset: number;
  atMs: number;
  /** The ledger the receipt named (the original's, for a duplicate). */
  ledgerId: number;
  duplicate: boolean;
  /** When the workload sent it (its own clock, as atMs). */
  sentAtMs: number;
}

/** How long the workload gets to create its topic and start producing. */
const START_TIMEOUT_MS = 60_000;
/** How long it gets to stop, catch up and read the topic back. */
const SUMMARY_TIMEOUT_MS = 180_000;

/** The producer and consumer of a pod test, running in a client pod of the run. */
export class PodWorkload {
  private constructor(
    private readonly group: ChildProcessGroup,
    private readonly acksFile: string,
    private readonly runner: PodRunner,
  ) {}

  /** Each acknowledgement once stopped: payload, offset, when (ms since the epoch). */
  ackRecords(): AckRecord[] {
    const rows = JSON.parse(readFileSync(this.acksFile, 'utf8')) as [string, number, number, number, number, number][];
    return rows.map(([payload, offset, atMs, ledgerId, duplicate, sentAtMs]) => ({
      payload,
      offset,
      atMs,
      ledgerId,
      duplicate: duplicate === 1,
      sentAtMs,
    }));
  }

  /** Starts the load from `clientPod`, talking to the metadata Service by its name. */
  static async start(
    runner: PodRunner,
    clientPod: string,
    name: string,
    service = 'ledgerline-metadata:6650',
  ): Promise<PodWorkload> {
    const main = join(__dirname, 'pod-workload-main.ts');
    const acksFile = join(runner.runDir, `${name}-acks.json`);
    const group = runner.exec(clientPod, process.execPath, ['--import', 'tsx', main, service, name, acksFile]);
    const workload = new PodWorkload(group, acksFile, runner);
    await group.waitForOutput(/"event":"producing"/, START_TIMEOUT_MS);
    return workload;
  }

  /** Resolves once the workload reported at least `count` acknowledgements in all. */
  async waitForAcks(count: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.acked() < count) {
      if (Date.now() > deadline || !this.group.running)
        throw new Error(
          `the workload reported ${this.acked()} of ${count} acknowledgements: ${this.output.slice(-1000)}\n` +
            `what the run saw lately:\n${this.runner.events
              .timeline()
              .slice(-60)
              .map((line) => `  ${line}`)
              .join('\n')}\n` +
            `what the pods logged above info:\n${podLogTails(this.runner.runDir)}\n` +
            `what the Services' proxies did:\n${[...this.runner.proxies.values()]
              .flatMap((proxy) => proxy.stats.describe())
              .map((line) => `  ${line}`)
              .join('\n')}\n` +
            `connections through the Services now:\n${[...this.runner.proxies.values()]
              .flatMap((proxy) => proxy.describeConnections())
              .map((line) => `  ${line}`)
              .join('\n')}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** The last acknowledgement count the workload reported. */
  acked(): number {
    const counts = [...this.group.output.matchAll(/"count":(\d+)/g)];
    return counts.length === 0 ? 0 : Number(counts[counts.length - 1]![1]);
  }

  get output(): string {
    return this.group.output;
  }

  /** When stop() told the workload to stop producing (ms since the epoch): the end of its acknowledgements. */
  stoppedAtMs = NaN;

  /** Stops producing and returns the summary of what the clients saw and what the topic holds. */
  async stop(): Promise<WorkloadSummary> {
    this.stoppedAtMs = Date.now();
    this.group.signal('SIGTERM');
    await this.group.waitForOutput(/"event":"summary"/, SUMMARY_TIMEOUT_MS);
    await this.group.stop('SIGTERM', 10_000);
    const line = this.group.output.split('\n').find((candidate) => candidate.includes('"event":"summary"'))!;
    return JSON.parse(line) as WorkloadSummary;
  }

  async kill(): Promise<void> {
    await this.group.stop('SIGKILL', 10_000);
  }
}

/** The apps the dev overlay's Deployments run (a Deployment for every cluster role), and those Deployments. */
export const DEV_OVERLAY_APPS: readonly string[] = CLUSTER_ROLES;
export const DEV_DEPLOYMENTS = DEV_OVERLAY_APPS.map((app) => `ledgerline-${app}`);

/** The last lines above info level each pod logged: why a run made no progress. */
export function podLogTails(runDir: string): string {
  const pods = join(runDir, 'pods');
  if (!existsSync(pods)) return '(no pod logs)';
  return readdirSync(pods)
    .flatMap((pod) => {
      const logs = join(pods, pod, 'logs');
      if (!existsSync(logs)) return [];
      return readdirSync(logs).map((file) => {
        const lines = readFileSync(join(logs, file), 'utf8')
          .split('\n')
          .filter((line) => line !== '' && !line.includes('"level":30'))
          .slice(-8)
          .map((line) => `  ${line.slice(0, 400)}`);
        return `${pod}/${file}:\n${lines.join('\n')}`;
      });
    })
    .join('\n');
}
