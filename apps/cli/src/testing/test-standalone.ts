import { loadConfig } from '@ledgerline/service-kit';
import { standaloneServerConfigSchema, startStandalone, type RunningStandalone } from '../standalone.js';

/**
 * A standalone for tests: on loopback, free ports, no signal handlers (the
 * test stops it with shutdown()), state under dataDir.
 */
export function startTestStandalone(
  dataDir: string,
  logLevel = 'silent',
  extraArgv: readonly string[] = [],
): Promise<RunningStandalone> {
  const config = loadConfig(standaloneServerConfigSchema, {
    env: {},
    argv: [
      '--data-dir',
      dataDir,
      '--grpc-host',
      '127.0.0.1',
      '--grpc-port',
      '0',
      '--read-only-grpc-port',
      '0',
      '--metrics-port',
      '0',
      '--kafka-host',
      '127.0.0.1',
      '--kafka-port',
      '0',
      '--log-level',
      logLevel,
      ...extraArgv,
    ],
  });
  return startStandalone(config, { signals: [] });
}
