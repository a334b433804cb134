import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

const helper = path.join(__dirname, 'unexpected-rejection.ts');

/** Runs `body` in a fresh Node process (Jest keeps the real uncaught-exception handling to itself). */
function runWithHelper(body: string) {
  const script = `const { unexpectedRejection } = require(${JSON.stringify(helper)});\n${body}`;
  return spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { encoding: 'utf8', timeout: 20_000 });
}

describe('unexpectedRejection', () => {
  it('throws the rejection again as an uncaught exception, which ends the process', () => {
    const run = runWithHelper(
      `Promise.reject(new Error('a background task broke an invariant')).catch(unexpectedRejection);
setTimeout(() => process.stdout.write('still running'), 500);`,
    );
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('a background task broke an invariant');
    expect(run.stdout).not.toContain('still running');
  });

  it('does nothing to a task that fulfils', () => {
    const run = runWithHelper(
      `Promise.resolve(1).catch(unexpectedRejection).then(() => process.stdout.write('done'));`,
    );
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('done');
  });
});
