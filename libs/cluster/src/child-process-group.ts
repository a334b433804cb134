import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

/** How much of a process's output is kept for error messages and `cluster status`. */
export const OUTPUT_TAIL_CHARS = 20_000;

/**
 * A child process that leads its own process group (spawned detached), so a
 * stop reaches everything it started and a Ctrl-C in the terminal reaches
 * only the command that started it, which then stops its children in order.
 */
export class ChildProcessGroup {
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private outputTail = '';
  private readonly outputListeners = new Set<() => void>();

  constructor(
    readonly name: string,
    private readonly child: ChildProcess,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    const keep = (chunk: Buffer): void => {
      this.outputTail = (this.outputTail + chunk.toString()).slice(-OUTPUT_TAIL_CHARS);
      for (const listener of this.outputListeners) listener();
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
  }

  static spawn(name: string, command: string, args: readonly string[], options: SpawnOptions): ChildProcessGroup {
    const child = spawn(command, args, { ...options, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    return new ChildProcessGroup(name, child);
  }

  get pid(): number {
    return this.child.pid!;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  get output(): string {
    return this.outputTail;
  }

  /** Resolves once the output matches `pattern`; rejects when the process exits first or after `timeoutMs`. */
  waitForOutput(pattern: RegExp, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const finish = (error?: Error): void => {
        clearTimeout(timer);
        this.outputListeners.delete(check);
        if (error === undefined) resolve();
        else reject(error);
      };
      const check = (): void => {
        if (pattern.test(this.outputTail)) finish();
        else if (!this.running) finish(new Error(`${this.name} exited before printing ${pattern}: ${this.outputTail}`));
      };
      const timer = setTimeout(
        () => finish(new Error(`${this.name} did not print ${pattern} within ${timeoutMs} ms`)),
        timeoutMs,
      );
      this.outputListeners.add(check);
      this.exited.then(check, check);
      check();
    });
  }

  /** Sends `signal` to the whole group; a group already gone is not an error. */
  signal(signal: NodeJS.Signals): void {
    if (!this.running) return;
    try {
      process.kill(-this.pid, signal);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }

  /**
   * Sends `signal` and waits at most `timeoutMs` for the exit, then SIGKILLs
   * the group and waits for that (a SIGKILL is not refused). Resolves with
   * whether the process left within the bound on its own.
   */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 30_000): Promise<boolean> {
    if (!this.running) {
      await this.exited;
      return true;
    }
    this.signal(signal);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)));
    const outcome = await Promise.race([this.exited, late]);
    clearTimeout(timer);
    if (outcome !== 'late') return true;
    this.signal('SIGKILL');
    await this.exited;
    return false;
  }
}
