import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { waitForPort } from '@ledgerline/testing';

const ROOT = resolve(__dirname, '../../../..');

/** A service started as its own Node process (through tsx's loader), stopped by its pid. */
export class ServiceProcess {
  private exited: Promise<number | null>;
  output = '';

  private constructor(
    readonly name: string,
    readonly port: number,
    private readonly child: ChildProcess,
  ) {
    this.exited = new Promise((done) =>
      child.once('exit', (code, signal) => done(code ?? (signal === null ? null : -1))),
    );
    child.stdout?.on('data', (chunk: Buffer) => (this.output = (this.output + chunk.toString()).slice(-20_000)));
    child.stderr?.on('data', (chunk: Buffer) => (this.output = (this.output + chunk.toString()).slice(-20_000)));
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  get pid(): number {
    return this.child.pid!;
  }

  /**
   * Starts `apps/<app>/src/main.ts` with LEDGERLINE_* settings and waits
   * (bounded) until its port answers and, when given, `readyLine` shows in
   * its output.
   */
  static async start(
    name: string,
    app: string,
    port: number,
    settings: Record<string, string>,
    options: { readyLine?: RegExp; timeoutMs?: number } = {},
  ): Promise<ServiceProcess> {
    const timeoutMs = options.timeoutMs ?? 90_000;
    const kept = Object.entries(process.env).filter(([key]) => !key.startsWith('LEDGERLINE_'));
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'apps', app, 'src/main.ts')], {
      cwd: ROOT,
      env: { ...Object.fromEntries(kept), ...settings, LEDGERLINE_GRPC_PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const started = new ServiceProcess(name, port, child);
    const failed = started.exited.then((code) => {
      throw new Error(`${name} exited with ${code} before serving: ${started.output}`);
    });
    try {
      await Promise.race([waitForPort(port, timeoutMs), failed]);
      if (options.readyLine !== undefined)
        await Promise.race([started.waitForOutput(options.readyLine, timeoutMs), failed]);
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
    failed.catch(() => undefined);
    return started;
  }

  /** Resolves once the output matches `pattern`; rejects after timeoutMs. */
  waitForOutput(pattern: RegExp, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!pattern.test(this.output)) return;
        clearTimeout(timer);
        this.child.stdout?.off('data', check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.child.stdout?.off('data', check);
        reject(new Error(`${this.name} did not print ${pattern} within ${timeoutMs} ms: ${this.output}`));
      }, timeoutMs);
      this.child.stdout?.on('data', check);
      check();
    });
  }

  /** Sends `signal` and waits (bounded) for the exit; SIGKILL if the process outlives the bound. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 30_000): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return this.exited;
    process.kill(this.pid, signal);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((done) => (timer = setTimeout(() => done('late'), timeoutMs)));
    const outcome = await Promise.race([this.exited, late]);
    clearTimeout(timer);
    if (outcome === 'late') {
      process.kill(this.pid, 'SIGKILL');
      return this.exited;
    }
    return outcome;
  }
}
