import { execFile, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../../..');
/** Bounds one run of an app's entry; a process past it is killed (SIGTERM) and reported as exit status -1. */
const APP_MAIN_TIMEOUT_MS = 60_000;

export interface AppMainOutcome {
  /** The exit status, or -1 when the process was killed. */
  code: number;
  stderr: string;
}

/**
 * Runs `apps/<app>/src/main.ts` as its own process (node with the tsx loader)
 * with none of the caller's LEDGERLINE_ settings, only `settings`: how the
 * apps' specs check what an operator sees when a service refuses to start.
 */
export function runAppMain(app: string, settings: Record<string, string>): Promise<AppMainOutcome> {
  const kept = Object.entries(process.env).filter(([key]) => !key.startsWith('LEDGERLINE_'));
  const main = join(ROOT, 'apps', app, 'src/main.ts');
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', main],
      { cwd: ROOT, timeout: APP_MAIN_TIMEOUT_MS, env: { ...Object.fromEntries(kept), ...settings } },
      (error, _stdout, stderr) => {
        done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stderr });
      },
    );
  });
}

/** An app's entry started as its own process and left running: what it printed so far, and how to stop it. */
export interface RunningAppMain {
  readonly pid: number;
  /** stdout and stderr as printed so far. */
  output(): string;
  /** SIGKILLs the process (by its id) and waits for it to be gone. */
  stop(): Promise<void>;
}

/** Starts `apps/<app>/src/main.ts` like runAppMain, but returns while it runs (a spec that checks it serves). */
export function startAppMain(app: string, settings: Record<string, string>): RunningAppMain {
  const kept = Object.entries(process.env).filter(([key]) => !key.startsWith('LEDGERLINE_'));
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'apps', app, 'src/main.ts')], {
    cwd: ROOT,
    env: { ...Object.fromEntries(kept), ...settings },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let printed = '';
  child.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    pid: child.pid!,
    output: () => printed,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
