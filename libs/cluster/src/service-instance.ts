import { LedgerlineError } from '@ledgerline/errors';
import { ChildProcessGroup } from './child-process-group.js';
import { checkHealth, type ClusterTlsFiles } from './health.js';
import type { Launch } from './launcher.js';
import { waitUntil } from './ports.js';
import { ClusterReason } from './reasons.js';
import { roleSpec, type ClusterRole } from './roles.js';

/** One service process of a local cluster. */
export class ServiceInstance {
  private group: ChildProcessGroup | undefined;
  private starts = 0;

  constructor(
    readonly name: string,
    readonly role: ClusterRole,
    readonly grpcPort: number,
    readonly metricsPort: number,
    private readonly launch: Launch,
    private readonly env: NodeJS.ProcessEnv,
    /** The files health checks use when the cluster serves TLS. */
    private readonly tls?: ClusterTlsFiles,
    /** The Kafka listener's port, for a Kafka gateway. */
    readonly kafkaPort?: number,
    /** The console's HTTP port, for the console. */
    readonly consolePort?: number,
  ) {}

  /** The console's URL; undefined for other roles. */
  get consoleUrl(): string | undefined {
    return this.consolePort === undefined ? undefined : `http://127.0.0.1:${this.consolePort}/`;
  }

  get address(): string {
    return `127.0.0.1:${this.grpcPort}`;
  }

  /** host:port of the Kafka listener (a Kafka client's bootstrap server); undefined for other roles. */
  get kafkaAddress(): string | undefined {
    return this.kafkaPort === undefined ? undefined : `127.0.0.1:${this.kafkaPort}`;
  }

  get pid(): number | undefined {
    return this.group?.running ? this.group.pid : undefined;
  }

  get running(): boolean {
    return this.group?.running ?? false;
  }

  /** The last lines the process printed, for a failure message. */
  get output(): string {
    return this.group?.output ?? '';
  }

  /** How the process ended, once it has. */
  get exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> | undefined {
    return this.group?.exited;
  }

  /**
   * Starts the process (again, after a stop) and waits at most `timeoutMs`
   * until grpc.health.v1 answers SERVING on its port and, for a role with a
   * ready line, the process printed it; kills it and fails with its last
   * output otherwise.
   */
  async start(timeoutMs: number): Promise<void> {
    if (this.running) return;
    this.starts++;
    const group = ChildProcessGroup.spawn(this.name, this.launch.command, this.launch.args, {
      cwd: this.launch.cwd,
      env: this.env,
    });
    this.group = group;
    const deadline = Date.now() + timeoutMs;
    const healthy = await waitUntil(
      async () => !group.running || (await checkHealth(this.address, 1_000, this.tls)) === 'SERVING',
      timeoutMs,
      100,
    );
    const readyLine = roleSpec(this.role).readyLine;
    const ready =
      healthy &&
      group.running &&
      (readyLine === undefined ||
        (await group.waitForOutput(readyLine, Math.max(0, deadline - Date.now())).then(
          () => true,
          () => false,
        )));
    if (ready && group.running) return;
    const running = group.running;
    await group.stop('SIGKILL');
    throw new LedgerlineError(
      'UNAVAILABLE',
      ClusterReason.START_FAILED,
      `${this.name} (${this.launch.describe}) ${running ? `was not ready within ${timeoutMs} ms` : 'exited before serving'}: ${group.output.slice(-2_000)}`,
    );
  }

  /** SIGTERM (a graceful drain) or SIGKILL (a crash); a process outliving `timeoutMs` is killed. Resolves with whether it left in time. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 30_000): Promise<boolean> {
    const group = this.group;
    if (group === undefined) return true;
    return group.stop(signal, timeoutMs);
  }

  /**
   * Sends `signal` to the process group and returns at once: SIGSTOP makes a
   * process that hangs with its sockets open (a stall, not a crash), SIGCONT
   * lets it run again.
   */
  signal(signal: NodeJS.Signals): void {
    this.group?.signal(signal);
  }

  /** Resolves once the process printed a line matching `pattern`; rejects when it exits first or after `timeoutMs`. */
  waitForOutput(pattern: RegExp, timeoutMs: number): Promise<void> {
    if (this.group === undefined) return Promise.reject(new Error(`${this.name} was never started`));
    return this.group.waitForOutput(pattern, timeoutMs);
  }

  /** How many times the process was started. */
  get startCount(): number {
    return this.starts;
  }
}
