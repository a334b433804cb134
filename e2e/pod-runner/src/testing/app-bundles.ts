import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { newestFileMs } from '@ledgerline/testing';
import { DEV_OVERLAY_APPS } from './pod-workload.js';

/** Where the sources the bundles are built from live. */
const SOURCE_ROOTS = ['apps', 'libs'];

/** A TypeScript source a bundle is built from (specs are not). */
const isSource = (name: string): boolean => name.endsWith('.ts') && !name.endsWith('.spec.ts');

/**
 * The apps whose bundle is missing or older than a source file: a pod runs the bundle, so a spec run against
 * one built before a change tests the code as it was (a pod spec of a new writer owner feature once failed so,
 * against a bundle from two hours earlier).
 */
export function staleBundles(root: string, apps: readonly string[] = DEV_OVERLAY_APPS): string[] {
  const sourcesMs = Math.max(...SOURCE_ROOTS.map((dir) => newestFileMs(join(root, dir), isSource)));
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
