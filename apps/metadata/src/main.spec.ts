import { freePort, runAppMain, sharedServers, startAppMain, uniqueNamespace, waitForPort } from '@ledgerline/testing';

describe('the metadata service process', () => {
  it('refuses missing settings with one line and exit status 2', async () => {
    const run = await runAppMain('metadata', { LEDGERLINE_GRPC_PORT: '0', LEDGERLINE_METRICS_PORT: '0' });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^metadata service failed to start: INVALID_ARGUMENT INVALID_CONFIG: .*redisUrl.*\n$/);
  });

  it('fails with one line and exit status 1 when its store cannot be reached', async () => {
    const run = await runAppMain('metadata', {
      LEDGERLINE_REDIS_URL: 'redis://127.0.0.1:1',
      LEDGERLINE_NATS_URL: 'nats://127.0.0.1:1',
      LEDGERLINE_GRPC_PORT: '0',
      LEDGERLINE_METRICS_PORT: '0',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^metadata service failed to start: UNAVAILABLE STORE_UNAVAILABLE: [^\n]*\n$/);
  });

  it('serves while NATS cannot be reached yet (notifications are hints), saying so', async () => {
    const port = await freePort();
    const app = startAppMain('metadata', {
      LEDGERLINE_REDIS_URL: sharedServers().redisUrl,
      LEDGERLINE_REDIS_KEY_PREFIX: uniqueNamespace('late-nats'),
      LEDGERLINE_NATS_URL: `nats://127.0.0.1:${await freePort()}`,
      LEDGERLINE_GRPC_PORT: String(port),
      LEDGERLINE_METRICS_PORT: '0',
    });
    try {
      await waitForPort(port, 60_000);
      expect(app.output()).toMatch(/cannot connect to NATS[^\n]*serving without notifications/);
      expect(app.output()).not.toMatch(/failed to start/);
    } finally {
      await app.stop();
    }
  });
});
