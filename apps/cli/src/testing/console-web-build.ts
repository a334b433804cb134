import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { newestFileMs } from '@ledgerline/testing';

const ROOT = resolve(__dirname, '../../../..');
const WEB = join(ROOT, 'apps/console/web');
const BUILT = join(ROOT, 'dist/apps/console-web/index.html');
/** A build of the front-end takes seconds; past this it is taken for hung. */
const BUILD_TIMEOUT_MS = 180_000;

function builtMs(): number {
  try {
    return statSync(BUILT).mtimeMs;
  } catch {
    return 0;
  }
}

/**
 * Builds the console's front-end (what `nx run-many -t build` builds in CI)
 * when dist has none or one older than a source file, so a spec never tests
 * pages from before the change it checks.
 */
export async function ensureConsoleWebBuilt(): Promise<void> {
  const sources = Math.max(newestFileMs(join(WEB, 'src')), statSync(join(WEB, 'index.html')).mtimeMs);
  if (builtMs() > sources) return;
  await new Promise<void>((done, fail) => {
    execFile(
      process.execPath,
      [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'],
      { cwd: WEB, timeout: BUILD_TIMEOUT_MS },
      (error, _stdout, stderr) => (error === null ? done() : fail(new Error(`vite build failed: ${stderr}`))),
    );
  });
}
