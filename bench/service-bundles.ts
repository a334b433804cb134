// How the bench starts a service or the CLI: from the bundle we ship
// (dist/apps/<app>/main.js, what the Dockerfile and the pods run), built
// first when it is missing or older than a source it is built from. Through
// tsx the same code costs more CPU per call (its loader, and the function
// names it keeps with a call per closure made), so figures from sources
// overstate what a deployment spends.
//
// Profiling wants sources: a profile of a bundle names one file, and
// cpu-profile-breakdown.ts charges samples by the source file's package. So
// with BENCH_CPU_PROF set, or BENCH_FROM_SOURCES=1, services run from their
// sources through tsx.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..');

/** The newest modification time of a TypeScript source under `folder` (specs aside: no bundle holds them). */
function newestSourceMs(folder: string): number {
  let newest = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSourceMs(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts'))
      newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

let newestWorkspaceSource: number | undefined;

/** The newest source of every app and lib (any of them may be in a bundle), read once per bench process. */
function newestWorkspaceSourceMs(): number {
  if (newestWorkspaceSource !== undefined) return newestWorkspaceSource;
  let newest = 0;
  for (const top of ['apps', 'libs']) {
    for (const project of readdirSync(join(ROOT, top), { withFileTypes: true })) {
      const sources = join(ROOT, top, project.name, 'src');
      if (project.isDirectory() && existsSync(sources)) newest = Math.max(newest, newestSourceMs(sources));
    }
  }
  newestWorkspaceSource = newest;
  return newest;
}

/** Whether services run from their sources through tsx rather than from their bundles (see the top of this file). */
export function fromSources(): boolean {
  return process.env['BENCH_FROM_SOURCES'] === '1' || process.env['BENCH_CPU_PROF'] !== undefined;
}

const fresh = new Set<string>();

/** dist/apps/<app>/main.js, every app's bundle built first (once per bench process) when this one is missing or stale. */
function bundleOf(app: string): string {
  const bundle = join(ROOT, 'dist', 'apps', app, 'main.js');
  if (fresh.has(app)) return bundle;
  if (!existsSync(bundle) || statSync(bundle).mtimeMs < newestWorkspaceSourceMs()) {
    console.error(`bench: building the app bundles (dist/apps/${app}/main.js is missing or older than its sources)`);
    execFileSync('npx', ['nx', 'run-many', '-t', 'build', '--output-style=stream'], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, NX_DAEMON: 'false' },
    });
  }
  fresh.add(app);
  return bundle;
}

/** The node arguments that run `app` (`cli` for the command line) before its own arguments. */
export function appEntry(app: string): string[] {
  return fromSources() ? ['--import', 'tsx', join(ROOT, 'apps', app, 'src', 'main.ts')] : [bundleOf(app)];
}
