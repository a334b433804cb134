import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { staleBundles } from './app-bundles.js';

/*
 * A pod runs its app's bundle, so a bundle older than the sources must be
 * rebuilt before a pod spec, not only a missing one.
 */

describe('staleBundles', () => {
  let root: string;
  const at = (path: string, seconds: number) => {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, '');
    utimesSync(path, seconds, seconds);
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'app-bundles-'));
    at(join(root, 'libs', 'a', 'src', 'a.ts'), 1_000);
    at(join(root, 'apps', 'one', 'src', 'main.ts'), 1_000);
    at(join(root, 'dist', 'apps', 'one', 'main.js'), 2_000);
    at(join(root, 'dist', 'apps', 'two', 'main.js'), 2_000);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('names none while every bundle is newer than every source', () => {
    expect(staleBundles(root, ['one', 'two'])).toEqual([]);
  });

  it('names every bundle older than a source changed since, and a missing one', () => {
    at(join(root, 'libs', 'a', 'src', 'deep', 'b.ts'), 3_000);
    expect(staleBundles(root, ['one', 'two', 'three'])).toEqual(['one', 'two', 'three']);
  });

  it('leaves a change to a spec alone: specs are not in the bundles', () => {
    at(join(root, 'libs', 'a', 'src', 'a.spec.ts'), 3_000);
    expect(staleBundles(root, ['one'])).toEqual([]);
  });
});
