import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The newest modification time (ms) of a file under `dir` that `accepts`
 * takes (by name), skipping node_modules and dist; 0 when there is none.
 * What a spec compares a build's output with, so it never runs against a
 * build older than the sources it tests.
 */
export function newestFileMs(dir: string, accepts: (name: string) => boolean = () => true): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestFileMs(path, accepts));
    else if (accepts(entry.name)) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}
