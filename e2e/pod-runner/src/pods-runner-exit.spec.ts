import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REGISTRY_DIR } from './run-registry.js';
import { linksWithPrefix, namespacesWithPrefix, processAlive, sweepStaleRuns } from './index.js';

/*
 * What a pod runner leaves when its own process ends without `down`: a
 * runner that fails (an uncaught error: Node runs its exit handlers) removes
 * its namespaces, links and pod processes itself; one killed with SIGKILL
 * (no handler runs) leaves them, and the next runner's sweep removes them,
 * the pod processes with them.
 */

const MAIN = join(__dirname, 'testing', 'runner-exit-main.ts');
const UP_MS = 60_000;

interface Run {
  prefix: string;
  pids: number[];
  exited: Promise<number | null>;
  pid: number;
}

function startRunner(mode: 'crash' | 'hold'): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, mode], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`the runner printed nothing in ${UP_MS} ms: ${output}`)), UP_MS);
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((candidate) => candidate.startsWith('{"prefix"'));
      if (line === undefined) return;
      clearTimeout(timer);
      resolve({ ...(JSON.parse(line) as { prefix: string; pids: number[] }), exited, pid: child.pid! });
    });
    exited
      .then((code) => {
        clearTimeout(timer);
        reject(new Error(`the runner exited ${code} before its pod ran: ${output}`));
      })
      .catch(() => undefined);
  });
}

const leftovers = (prefix: string) => [...namespacesWithPrefix(prefix), ...linksWithPrefix(prefix)];

/** Waits (bounded) for `check` to hold. */
async function until(check: () => boolean, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline;) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return check();
}

describe('a pod runner whose process ends without down', () => {
  it('removes what it made when it fails', async () => {
    const run = await startRunner('crash');
    expect(run.pids.length).toBeGreaterThan(0);
    expect(await run.exited).toBe(1);
    expect(leftovers(run.prefix)).toEqual([]);
    expect(await until(() => run.pids.every((pid) => !processAlive(pid)), 5_000)).toBe(true);
  }, 120_000);

  it('leaves it when killed with SIGKILL, and the next sweep removes it, its pod processes too', async () => {
    const run = await startRunner('hold');
    process.kill(run.pid, 'SIGKILL');
    await run.exited;
    // Left behind, unless another runner starting meanwhile (pod specs run side by side) swept it already.
    if (existsSync(join(REGISTRY_DIR, `${run.prefix}.json`))) {
      expect(leftovers(run.prefix).length).toBeGreaterThan(0);
      expect(run.pids.some((pid) => processAlive(pid))).toBe(true);
    }
    // Another runner starting meanwhile (pod specs run side by side) may sweep it first: either way it goes.
    sweepStaleRuns();
    expect(leftovers(run.prefix)).toEqual([]);
    expect(await until(() => run.pids.every((pid) => !processAlive(pid)), 5_000)).toBe(true);
  }, 120_000);
});
