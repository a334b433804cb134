import { runAppMain } from '@ledgerline/testing';

describe('the metadata service process', () => {
  it('refuses missing settings with one line and exit status 2', async () => {
    const run = await runAppMain('metadata', { LEDGERLINE_GRPC_PORT: '0', LEDGERLINE_METRICS_PORT: '0' });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^metadata service failed to start: INVALID_ARGUMENT INVALID_CONFIG: .*redisUrl.*\n$/);
  });

  it('fails with one line and exit status 1 when NATS cannot be reached', async () => {
    const run = await runAppMain('metadata', {
      LEDGERLINE_REDIS_URL: 'redis://127.0.0.1:1',
      LEDGERLINE_NATS_URL: 'nats://127.0.0.1:1',
      LEDGERLINE_GRPC_PORT: '0',
      LEDGERLINE_METRICS_PORT: '0',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^metadata service failed to start: UNAVAILABLE BUS_UNAVAILABLE: [^\n]*\n$/);
  });
});
