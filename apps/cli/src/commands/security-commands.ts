import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createToken } from '@ledgerline/security';
import {
  createDevCertificates,
  DEV_CERTIFICATE_NAMES,
  writeDevCertificates,
} from '@ledgerline/security/dev-certificates';
import type { Command } from 'commander';
import { integerIn } from '../admin-command.js';
import { CliExit, CliReason, reportError, usageError } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';
import { descriptionOf } from '../command-index.js';

/** A development CA lives a year unless told otherwise; at most ten. */
const MAX_VALIDITY_DAYS = 3650;

interface CertsOptions {
  out: string;
  host: string[];
  days: number;
}

interface TokenOptions {
  subject: string;
  expiresIn?: string;
  secret?: string;
  privateKey?: string;
  algorithm: 'RS256' | 'ES256';
  issuer?: string;
  audience?: string;
}

async function certsDev(io: CliIo, options: CertsOptions): Promise<void> {
  const dir = resolve(options.out);
  const hosts = ['localhost', '127.0.0.1', '::1', ...options.host];
  const files = await writeDevCertificates(dir, await createDevCertificates({ hosts, validityDays: options.days }));
  io.out(`wrote a development CA and certificates for ${DEV_CERTIFICATE_NAMES.join(', ')} to ${dir}`);
  io.out(
    `  a service:  LEDGERLINE_TLS_CERT=${files.leaves['metadata']!.cert} LEDGERLINE_TLS_KEY=${files.leaves['metadata']!.key} LEDGERLINE_TLS_CA=${files.caCert}`,
  );
  io.out(
    `  a client:   ledgerline --tls-ca ${files.caCert} --tls-cert ${files.leaves['client']!.cert} --tls-key ${files.leaves['client']!.key} ...`,
  );
  io.out('  these are for development only: production certificates come from your own CA');
}

async function tokensCreate(io: CliIo, options: TokenOptions): Promise<void> {
  const secret = options.secret ?? process.env['LEDGERLINE_AUTH_TOKEN_SECRET'];
  let privateKeyPem: string | undefined;
  if (options.privateKey !== undefined) {
    try {
      privateKeyPem = readFileSync(options.privateKey, 'utf8');
    } catch (error) {
      throw usageError(CliReason.FILE_UNREADABLE, `--private-key ${options.privateKey}: ${(error as Error).message}`);
    }
  }
  if ((secret === undefined) === (privateKeyPem === undefined)) {
    throw usageError(
      CliReason.TOKEN_KEY_MISSING,
      'sign with exactly one of --secret (or LEDGERLINE_AUTH_TOKEN_SECRET) or --private-key <pem file>',
    );
  }
  const token = await createToken({
    subject: options.subject,
    ...(privateKeyPem === undefined ? { secret: secret! } : { privateKeyPem, algorithm: options.algorithm }),
    ...(options.expiresIn === undefined ? {} : { expiresIn: options.expiresIn }),
    ...(options.issuer === undefined ? {} : { issuer: options.issuer }),
    ...(options.audience === undefined ? {} : { audience: options.audience }),
  });
  io.out(token);
}

async function run(io: CliIo, action: () => Promise<void>): Promise<void> {
  try {
    await action();
  } catch (error) {
    throw new CliExit(reportError(io, error));
  }
}

/** `ledgerline certs dev` and `ledgerline tokens create`: what trying TLS and authentication needs. */
export function registerSecurityCommands(program: Command, io: CliIo): void {
  const certs = program.command('certs').description(descriptionOf('certs'));
  certs
    .command('dev')
    .description('make a development CA and a certificate for every service and for a client')
    .requiredOption('--out <dir>', 'directory to write ca.pem, <name>.pem and <name>-key.pem into')
    .option('--host <name...>', 'further DNS names or IP addresses the certificates are valid for', [])
    .option('--days <n>', 'validity in days', integerIn(1, MAX_VALIDITY_DAYS), 365)
    .action(async (options: CertsOptions) => run(io, () => certsDev(io, options)));
  const tokens = program.command('tokens').description(descriptionOf('tokens'));
  tokens
    .command('create')
    .description('issue a token for a role, signed with the cluster secret or a private key')
    .requiredOption('--subject <role>', 'the role the token names (its sub claim)')
    .option('--expires-in <duration>', 'lifetime such as 30m, 12h or 7d (default: no expiry)')
    .option('--secret <secret>', 'HS256 shared secret (env LEDGERLINE_AUTH_TOKEN_SECRET)')
    .option('--private-key <file>', 'PEM (PKCS#8) private key for RS256 or ES256')
    .option('--algorithm <alg>', 'RS256 or ES256 with --private-key', 'RS256')
    .option('--issuer <iss>', 'the iss claim')
    .option('--audience <aud>', 'the aud claim')
    .action(async (options: TokenOptions) => run(io, () => tokensCreate(io, options)));
}
