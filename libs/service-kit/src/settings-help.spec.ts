import { z } from 'zod';
import { settingsHelp } from './settings-help.js';

describe('settingsHelp', () => {
  const schema = z.object({
    grpcPort: z.number().int().default(6650),
    metricsPort: z.number().int().default(0),
    logLevel: z.enum(['info', 'debug']).default('info'),
    tlsCert: z.string().optional(),
    authEnabled: z.boolean().default(false),
    dataDir: z.string().default('./data'),
  });

  it('gives each setting its flag, variable, kind and default, one line each', () => {
    const lines = settingsHelp(schema).split('\n');
    expect(lines[0]).toBe('Settings (a flag overrides its environment variable):');
    expect(lines.slice(1).map((line) => line.trim().split(/\s+/))).toEqual([
      ['--grpc-port', '<number>', 'LEDGERLINE_GRPC_PORT', 'default:', '6650'],
      ['--metrics-port', '<number>', 'LEDGERLINE_METRICS_PORT', 'default:', 'a', 'free', 'port'],
      ['--log-level', '<info|debug>', 'LEDGERLINE_LOG_LEVEL', 'default:', '"info"'],
      ['--tls-cert', '<string>', 'LEDGERLINE_TLS_CERT', 'default:', 'unset'],
      ['--auth-enabled', '<boolean>', 'LEDGERLINE_AUTH_ENABLED', 'default:', 'false'],
      ['--data-dir', '<string>', 'LEDGERLINE_DATA_DIR', 'default:', '"./data"'],
    ]);
  });

  it('says what a note gives instead of the default, and uses another prefix', () => {
    const help = settingsHelp(schema, { dataDir: 'the working folder' }, 'OTHER_');
    expect(help).toMatch(/--data-dir <string> +OTHER_DATA_DIR +default: the working folder/);
  });
});
