import { runAppMain } from '@ledgerline/testing';

describe('the kafka gateway process', () => {
  it('refuses invalid settings with one line and exit status 2', async () => {
    const run = await runAppMain('kafka-gateway', {
      LEDGERLINE_GRPC_PORT: '0',
      LEDGERLINE_METRICS_PORT: '0',
      LEDGERLINE_KAFKA_PORT: '70000',
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^kafka gateway failed to start: INVALID_ARGUMENT INVALID_CONFIG: .*kafkaPort.*\n$/);
  });
});
