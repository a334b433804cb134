import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newestFileMs } from './newest-file.js';

describe('newestFileMs', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'newest-file-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const file = (path: string, seconds: number) => {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), '');
    utimesSync(join(dir, path), seconds, seconds);
  };

  it('finds the newest file the filter takes, in nested folders, never in node_modules or dist', () => {
    file('a/old.ts', 100);
    file('a/b/new.ts', 300);
    file('a/b/newer.spec.ts', 400);
    file('node_modules/x/newest.ts', 900);
    file('dist/main.ts', 800);
    expect(newestFileMs(dir, (name) => name.endsWith('.ts') && !name.endsWith('.spec.ts'))).toBe(300_000);
    expect(newestFileMs(dir)).toBe(400_000);
  });

  it('is 0 for a folder with no file the filter takes', () => {
    file('a/readme.md', 100);
    expect(newestFileMs(dir, (name) => name.endsWith('.ts'))).toBe(0);
  });
});
