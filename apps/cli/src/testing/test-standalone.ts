import { readFileSync } from 'node:fs';
import { createDevCertificates, writeDevCertificates } from '@ledgerline/security/dev-certificates';
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
      '--console-host',
      '127.0.0.1',
      '--console-port',
      '0',
      '--log-level',
      logLevel,
      ...extraArgv,
    ],
  });
  return startStandalone(config, { signals: [] });
}

/** The flags of a standalone serving mutual TLS with the metadata service's development certificate, and the CA. */
export interface MutualTls {
  readonly argv: readonly string[];
  readonly ca: Buffer;
}

/** Writes development certificates under `dir`: a standalone given `argv` serves mutual TLS with them. */
export async function mutualTlsArgv(dir: string): Promise<MutualTls> {
  const files = await writeDevCertificates(dir, await createDevCertificates());
  return {
    argv: [
      '--tls-cert',
      files.leaves['metadata']!.cert,
      '--tls-key',
      files.leaves['metadata']!.key,
      '--tls-ca',
      files.caCert,
    ],
    ca: readFileSync(files.caCert),
  };
}

/**
 * The flags of a standalone requiring bearer tokens signed with `secret` (HS256), `ops` its super-user role;
 * `permissionCacheMs` bounds how soon a grant or revoke reaches it (5 s by default).
 */
export function tokenAuthArgv(secret: string, permissionCacheMs?: number): string[] {
  const cache = permissionCacheMs === undefined ? [] : ['--auth-permission-cache-ms', String(permissionCacheMs)];
  return ['--auth-enabled', '--auth-token-secret', secret, '--super-user-roles', 'ops', ...cache];
}
