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

  it('fails the start on a Kafka TLS file it cannot read, naming it, with exit status 1', async () => {
    const missing = '/nonexistent/kafka-gateway.pem';
    const run = await runAppMain('kafka-gateway', {
      LEDGERLINE_GRPC_PORT: '0',
      LEDGERLINE_METRICS_PORT: '0',
      LEDGERLINE_KAFKA_PORT: '0',
      LEDGERLINE_KAFKA_CREATE_NAMESPACE: 'false',
      LEDGERLINE_KAFKA_TLS_CERT_FILE: missing,
      LEDGERLINE_KAFKA_TLS_KEY_FILE: '/nonexistent/kafka-gateway-key.pem',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^kafka gateway failed to start: INVALID_ARGUMENT TLS_FILES_INVALID: .*\n$/);
    expect(run.stderr).toContain(`cannot read the TLS certificate file ${missing}`);
  });

  it('refuses a Kafka TLS certificate without its key as invalid settings, exit status 2', async () => {
    const run = await runAppMain('kafka-gateway', {
      LEDGERLINE_GRPC_PORT: '0',
      LEDGERLINE_METRICS_PORT: '0',
      LEDGERLINE_KAFKA_PORT: '0',
      LEDGERLINE_KAFKA_CREATE_NAMESPACE: 'false',
      LEDGERLINE_KAFKA_TLS_CERT_FILE: '/nonexistent/kafka-gateway.pem',
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^kafka gateway failed to start: INVALID_ARGUMENT INVALID_CONFIG: .*kafkaTlsKeyFile.*\n$/,
    );
  });
});
