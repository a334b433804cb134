import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../../..');
const TSX = join(ROOT, 'node_modules/.bin/tsx');
const MAIN = join(ROOT, 'apps/garbage-collector/src/main.ts');

/** The environment without any LEDGERLINE_ setting, plus the given ones. */
function environment(settings: Record<string, string>): NodeJS.ProcessEnv {
  const kept = Object.entries(process.env).filter(([key]) => !key.startsWith('LEDGERLINE_'));
  return { ...Object.fromEntries(kept), ...settings };
}

function runMain(settings: Record<string, string>): Promise<{ code: number; stderr: string }> {
  return new Promise((done) => {
    execFile(TSX, [MAIN], { cwd: ROOT, timeout: 30_000, env: environment(settings) }, (error, _stdout, stderr) => {
      done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stderr });
    });
  });
}

describe('the garbage-collector process', () => {
  it('refuses missing or out-of-bounds settings with one line and exit status 2', async () => {
    const missing = await runMain({ LEDGERLINE_GRPC_PORT: '0', LEDGERLINE_METRICS_PORT: '0' });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /^garbage collector failed to start: INVALID_ARGUMENT INVALID_CONFIG: .*metadataAddress.*ledgerRedisUrl.*natsUrl.*\n$/,
    );
    const tooShort = await runMain({
      LEDGERLINE_METADATA_ADDRESS: '127.0.0.1:1',
      LEDGERLINE_LEDGER_REDIS_URL: 'redis://127.0.0.1:1',
      LEDGERLINE_NATS_URL: 'nats://127.0.0.1:1',
      LEDGERLINE_GC_INTERVAL_MS: '5',
    });
    expect(tooShort.code).toBe(2);
    expect(tooShort.stderr).toMatch(
      /^garbage collector failed to start: INVALID_ARGUMENT INVALID_CONFIG: .*gcIntervalMs.*\n$/,
    );
  });

  it('fails with one line and exit status 1 when NATS cannot be reached', async () => {
    const run = await runMain({
      LEDGERLINE_METADATA_ADDRESS: '127.0.0.1:1',
      LEDGERLINE_LEDGER_REDIS_URL: 'redis://127.0.0.1:1',
      LEDGERLINE_NATS_URL: 'nats://127.0.0.1:1',
      LEDGERLINE_GRPC_PORT: '0',
      LEDGERLINE_METRICS_PORT: '0',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^garbage collector failed to start: UNAVAILABLE BUS_UNAVAILABLE: [^\n]*\n$/);
  });
});
