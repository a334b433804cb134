import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { unexpectedRejection } from '@ledgerline/errors';

/*
 * A worker process for the multi-process SQLite tests: it
 * runs a worker script (see sqlite-worker-script.ts) with tsx in one node process (so a SIGKILL
 * kills the process that holds the database) and collects its JSON lines.
 */

const repositoryRoot = join(__dirname, '..', '..', '..');

export type WorkerLine = Record<string, unknown>;

export class WorkerProcess {
  readonly lines: WorkerLine[] = [];
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;
  private readonly listeners = new Set<() => void>();

  constructor(script: string, args: object) {
    this.child = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify(args)], {
      cwd: repositoryRoot,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      this.lines.push(JSON.parse(line) as WorkerLine);
      for (const listener of this.listeners) listener();
    });
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
    // `exited` never rejects; a listener that throws is a bug in the test.
    this.exited
      .then(() => {
        for (const listener of this.listeners) listener();
      })
      .catch(unexpectedRejection);
  }

  /** Resolves once a line satisfies `condition`; fails when the worker exits first or after `timeoutMs`. */
  waitFor(condition: (lines: WorkerLine[]) => boolean, timeoutMs = 20_000): Promise<void> {
    return new Promise((resolve, reject) => {
      let finished = false;
      const check = () => {
        if (finished) return;
        if (condition(this.lines)) finish();
        else if (this.child.exitCode !== null || this.child.signalCode !== null) {
          finish(new Error(`the worker exited; its last lines: ${JSON.stringify(this.lines.slice(-3))}`));
        }
      };
      const timer = setTimeout(() => finish(new Error(`no such line within ${timeoutMs} ms`)), timeoutMs);
      const finish = (error?: Error) => {
        finished = true;
        clearTimeout(timer);
        this.listeners.delete(check);
        if (error === undefined) resolve();
        else reject(error);
      };
      this.listeners.add(check);
      check();
    });
  }

  send(command: string): void {
    this.child.stdin!.write(`${command}\n`);
  }

  /** Kills the worker as a crash would (SIGKILL) and waits for it to be gone. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }
}
