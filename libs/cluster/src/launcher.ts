import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ClusterReason } from './reasons.js';
import { LedgerlineError } from '@ledgerline/errors';

/** How a service process is started: the command and its arguments. */
export interface Launch {
  command: string;
  args: string[];
  /** The working folder: the repository root, where `--import tsx` resolves. */
  cwd: string;
  /** What runs, for people: `apps/metadata/src/main.ts (tsx)`. */
  describe: string;
}

/** The folder holding the workspace's package.json (name `ledgerline`), searched upwards from `from`. */
export function findRepositoryRoot(from: string = __dirname): string {
  for (let folder = from; ; folder = dirname(folder)) {
    const manifest = join(folder, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'ledgerline')
      return folder;
    if (dirname(folder) === folder) {
      throw new LedgerlineError(
        'FAILED_PRECONDITION',
        ClusterReason.NO_WORKSPACE,
        `no Ledgerline checkout above ${from}: run 'ledgerline cluster' from a clone (after npm install)`,
      );
    }
  }
}

/** Whether a checkout holds an app, as sources or as a built bundle. */
export function hasApp(root: string, app: string): boolean {
  return (
    existsSync(join(root, 'apps', app, 'src', 'main.ts')) || existsSync(join(root, 'dist', 'apps', app, 'main.js'))
  );
}

/**
 * The sources through tsx when they are there, else the built bundle. A fresh
 * clone after `npm install` has the sources and tsx (a runtime dependency) but
 * no bundles, and sources can never be stale the way a bundle left from an
 * older build can; the bundle serves an install that ships only dist/.
 */
export function launchApp(root: string, app: string): Launch {
  const source = join(root, 'apps', app, 'src', 'main.ts');
  if (existsSync(source))
    return {
      command: process.execPath,
      args: ['--import', 'tsx', source],
      cwd: root,
      describe: `apps/${app}/src/main.ts (tsx)`,
    };
  const bundle = join(root, 'dist', 'apps', app, 'main.js');
  if (existsSync(bundle))
    return {
      command: process.execPath,
      args: ['--enable-source-maps', bundle],
      cwd: root,
      describe: `dist/apps/${app}/main.js`,
    };
  throw new LedgerlineError(
    'FAILED_PRECONDITION',
    ClusterReason.APP_MISSING,
    `this checkout has no apps/${app} (neither apps/${app}/src/main.ts nor dist/apps/${app}/main.js): start 0 of it or update the checkout`,
  );
}
