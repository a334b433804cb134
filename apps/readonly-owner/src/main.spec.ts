import { runAppMain } from '@ledgerline/testing';

describe('the read-only owner process', () => {
  it('refuses missing settings with one line and exit status 2', async () => {
    const run = await runAppMain('readonly-owner', { LEDGERLINE_GRPC_PORT: '0', LEDGERLINE_METRICS_PORT: '0' });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^read-only owner failed to start: INVALID_ARGUMENT INVALID_CONFIG: .*redisUrl.*\n$/);
  });
});
