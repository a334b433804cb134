import { z } from 'zod';
import { LedgerlineError } from '@ledgerline/errors';
import { loadConfig, settingSource } from './config.js';
import { serviceConfigSchema } from './service-config.js';

function configFailure(run: () => unknown): LedgerlineError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(LedgerlineError);
    return error as LedgerlineError;
  }
  throw new Error('loadConfig accepted a bad configuration');
}

describe('loadConfig', () => {
  const schema = serviceConfigSchema.extend({
    redisUrl: z.string().url().optional(),
    readonlyMode: z.boolean().default(false),
  });

  it('names settings after their environment variable and flag', () => {
    expect(settingSource('maxMessageSizeBytes')).toEqual({
      setting: 'maxMessageSizeBytes',
      env: 'LEDGERLINE_MAX_MESSAGE_SIZE_BYTES',
      flag: '--max-message-size-bytes',
    });
    expect(settingSource('grpcPort', 'GC').env).toBe('GC_GRPC_PORT');
  });

  it('uses the defaults when nothing is set', () => {
    const config = loadConfig(schema, { env: {}, argv: [] });
    expect(config).toMatchObject({ grpcPort: 6650, logLevel: 'info', readonlyMode: false, drainTimeoutMs: 10_000 });
    expect(config.redisUrl).toBeUndefined();
  });

  it('reads environment variables and converts numbers and booleans', () => {
    const config = loadConfig(schema, {
      env: { LEDGERLINE_GRPC_PORT: '7000', LEDGERLINE_READONLY_MODE: 'yes', LEDGERLINE_LOG_LEVEL: 'debug' },
      argv: [],
    });
    expect(config).toMatchObject({ grpcPort: 7000, readonlyMode: true, logLevel: 'debug' });
  });

  it('lets flags override the environment, in both flag forms', () => {
    const config = loadConfig(schema, {
      env: { LEDGERLINE_GRPC_PORT: '7000', LEDGERLINE_METRICS_PORT: '9000' },
      argv: ['--grpc-port', '7001', '--metrics-port=9001', '--readonly-mode'],
    });
    expect(config).toMatchObject({ grpcPort: 7001, metricsPort: 9001, readonlyMode: true });
  });

  it('names the bad setting, its variable, its flag and the value given', () => {
    const error = configFailure(() => loadConfig(schema, { env: { LEDGERLINE_GRPC_PORT: 'abc' }, argv: [] }));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.reason).toBe('INVALID_CONFIG');
    expect(error.message).toContain("grpcPort (LEDGERLINE_GRPC_PORT or --grpc-port) = 'abc'");
    expect(error.details).toEqual({ setting: 'grpcPort', env: 'LEDGERLINE_GRPC_PORT', flag: '--grpc-port' });
  });

  it('reports every bad setting at once', () => {
    const error = configFailure(() =>
      loadConfig(schema, { env: { LEDGERLINE_LOG_LEVEL: 'loud' }, argv: ['--grpc-port', '70000', '--redis-url', 'x'] }),
    );
    expect(error.message).toContain('grpcPort (LEDGERLINE_GRPC_PORT or --grpc-port)');
    expect(error.message).toContain("logLevel (LEDGERLINE_LOG_LEVEL or --log-level) = 'loud'");
    expect(error.message).toContain('redisUrl (LEDGERLINE_REDIS_URL or --redis-url)');
  });

  it('refuses an unknown flag and lists the known ones', () => {
    const error = configFailure(() => loadConfig(schema, { env: {}, argv: ['--grpc-prot', '1'] }));
    expect(error.message).toContain('unknown setting --grpc-prot');
    expect(error.message).toContain('--grpc-port');
  });

  it('refuses a stray argument', () => {
    const error = configFailure(() => loadConfig(schema, { env: {}, argv: ['7000'] }));
    expect(error.message).toContain("unexpected argument '7000'");
  });

  it('honours a custom prefix', () => {
    expect(loadConfig(schema, { env: { GC_GRPC_PORT: '1' }, argv: [], prefix: 'GC' }).grpcPort).toBe(1);
  });
});
