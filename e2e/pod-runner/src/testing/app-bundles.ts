import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DEV_OVERLAY_APPS } from './pod-workload.js';

/** Where the sources the bundles are built from live. */
const SOURCE_ROOTS = ['apps', 'libs'];

/** The newest modification time of a TypeScript source under `dir` (0 when there is none). */
function newestSourceMs(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSourceMs(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts'))
      newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * The apps whose bundle is missing or older than a source file: a pod runs the bundle, so a spec run against
 * one built before a change tests the code as it was (a pod spec of a new writer owner feature once failed so,
 * against a bundle from two hours earlier).
 */
export function staleBundles(root: string, apps: readonly string[] = DEV_OVERLAY_APPS): string[] {
  const sourcesMs = Math.max(...SOURCE_ROOTS.map((dir) => newestSourceMs(join(root, dir))));
  return apps.filter((app) => {
    const bundle = join(root, 'dist', 'apps', app, 'main.js');
    return !existsSync(bundle) || statSync(bundle).mtimeMs < sourcesMs;
  });
}

/** The app bundles the pods run: built (`npx nx run-many -t build`) when one is missing or stale. */
export function ensureAppBundles(root: string, apps: readonly string[] = DEV_OVERLAY_APPS): void {
  if (staleBundles(root, apps).length === 0) return;
  const built = spawnSync('npx', ['nx', 'run-many', '-t', 'build', '--output-style=static'], {
    cwd: root,
    stdio: 'inherit',
    timeout: 900_000,
    env: { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true' },
  });
  if (built.status !== 0) throw new Error(`npx nx run-many -t build failed (status ${built.status})`);
}
