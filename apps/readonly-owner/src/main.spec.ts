import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../../..');
const MAIN = join(ROOT, 'apps/readonly-owner/src/main.ts');

function runMain(settings: Record<string, string>): Promise<{ code: number; stderr: string }> {
  const kept = Object.entries(process.env).filter(([key]) => !key.startsWith('LEDGERLINE_'));
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', MAIN],
      { cwd: ROOT, timeout: 60_000, env: { ...Object.fromEntries(kept), ...settings } },
      (error, _stdout, stderr) => {
        done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stderr });
      },
    );
  });
}

describe('the read-only owner process', () => {
  it('refuses missing settings with one line and exit status 2', async () => {
    const run = await runMain({ LEDGERLINE_GRPC_PORT: '0', LEDGERLINE_METRICS_PORT: '0' });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^read-only owner failed to start: INVALID_ARGUMENT INVALID_CONFIG: .*redisUrl.*\n$/);
  });
});
