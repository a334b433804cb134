import { runAppMain } from '@ledgerline/testing';

describe('the garbage-collector process', () => {
  it('refuses missing or out-of-bounds settings with one line and exit status 2', async () => {
    const missing = await runAppMain('garbage-collector', { LEDGERLINE_GRPC_PORT: '0', LEDGERLINE_METRICS_PORT: '0' });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /^garbage collector failed to start: INVALID_ARGUMENT INVALID_CONFIG: .*metadataAddress.*ledgerRedisUrl.*natsUrl.*\n$/,
    );
    const tooShort = await runAppMain('garbage-collector', {
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

  it('fails with one line and exit status 1 when the metadata service cannot be reached, NATS being away or not', async () => {
    const run = await runAppMain('garbage-collector', {
      LEDGERLINE_METADATA_ADDRESS: '127.0.0.1:1',
      LEDGERLINE_LEDGER_REDIS_URL: 'redis://127.0.0.1:1',
      LEDGERLINE_NATS_URL: 'nats://127.0.0.1:1',
      LEDGERLINE_GRPC_PORT: '0',
      LEDGERLINE_METRICS_PORT: '0',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/cannot connect to NATS[^\n]*serving without notifications/);
    expect(run.stderr).toMatch(/garbage collector failed to start: (UNAVAILABLE|DEADLINE_EXCEEDED) [A-Z_]+: [^\n]*\n$/);
  });
});
