import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/*
 * `npx ledgerline` runs apps/cli/bin/ledgerline.js. It must run the bundle
 * only while the bundle is newer than every source file its map lists, and
 * tsx on the sources otherwise: a stale bundle would run yesterday's code.
 * The launcher is copied into a scratch checkout whose "bundle" and "sources"
 * each print their name, so the test sees which one ran.
 */

const ROOT = resolve(__dirname, '../../..');

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

function setModified(path: string, seconds: number): void {
  utimesSync(path, seconds, seconds);
}

/** Runs the launcher; bounded by the test's timeout, and by its own so a hung child cannot outlive the file. */
function launch(checkout: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((done, fail) => {
    execFile(
      process.execPath,
      [join(checkout, 'apps/cli/bin/ledgerline.js'), '--help'],
      { cwd: checkout, env: { ...process.env, ...env }, timeout: 60_000 },
      (error, stdout, stderr) =>
        error === null ? done(stdout.trim()) : fail(new Error(`${error.message}: ${stderr}`)),
    );
  });
}

describe('npx ledgerline (apps/cli/bin/ledgerline.js)', () => {
  let checkout: string;
  const bundle = () => join(checkout, 'dist/apps/cli/main.js');
  const source = () => join(checkout, 'apps/cli/src/main.ts');
  const helper = () => join(checkout, 'apps/cli/src/helper.ts');

  beforeEach(() => {
    checkout = mkdtempSync(join(tmpdir(), 'ledgerline-launcher-'));
    mkdirSync(join(checkout, 'apps/cli/bin'), { recursive: true });
    copyFileSync(join(ROOT, 'apps/cli/bin/ledgerline.js'), join(checkout, 'apps/cli/bin/ledgerline.js'));
    symlinkSync(join(ROOT, 'node_modules'), join(checkout, 'node_modules'));
    write(helper(), "export const from = 'sources';\n");
    write(source(), "import { from } from './helper';\nconsole.log(from);\n");
    write(bundle(), "console.log('bundle');\n");
    write(
      `${bundle()}.map`,
      JSON.stringify({ sources: ['../../../apps/cli/src/main.ts', '../../../apps/cli/src/helper.ts'] }),
    );
    setModified(source(), 1_000);
    setModified(helper(), 1_000);
    setModified(bundle(), 2_000);
  });
  afterEach(() => rmSync(checkout, { recursive: true, force: true }));

  it('runs the bundle while it is newer than every source it holds', async () => {
    expect(await launch(checkout)).toBe('bundle');
    // The list of sources is kept beside the bundle for the next start.
    expect(existsSync(`${bundle()}.sources.json`)).toBe(true);
    expect(await launch(checkout)).toBe('bundle');
  });

  it('runs the sources through tsx once any source is newer than the bundle', async () => {
    expect(await launch(checkout)).toBe('bundle');
    setModified(helper(), 3_000);
    expect(await launch(checkout)).toBe('sources');
  });

  it('reads the source list again after a rebuild', async () => {
    expect(await launch(checkout)).toBe('bundle');
    // A rebuild that now also holds a file edited after the first build.
    const added = join(checkout, 'apps/cli/src/added.ts');
    write(added, 'export {};\n');
    setModified(added, 4_000);
    write(
      `${bundle()}.map`,
      JSON.stringify({ sources: ['../../../apps/cli/src/main.ts', '../../../apps/cli/src/added.ts'] }),
    );
    setModified(bundle(), 3_000);
    expect(await launch(checkout)).toBe('sources');
  });

  it('runs the sources in a checkout that was never built, or when a source is gone', async () => {
    rmSync(join(checkout, 'dist'), { recursive: true });
    expect(await launch(checkout)).toBe('sources');
    write(bundle(), "console.log('bundle');\n");
    write(`${bundle()}.map`, JSON.stringify({ sources: ['../../../apps/cli/src/gone.ts'] }));
    expect(await launch(checkout)).toBe('sources');
  });

  it('runs the sources when LEDGERLINE_CLI_FROM_SOURCE=1 asks for them', async () => {
    expect(await launch(checkout, { LEDGERLINE_CLI_FROM_SOURCE: '1' })).toBe('sources');
  });
});
