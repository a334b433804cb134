import { readFileSync } from 'node:fs';
import { Metadata } from '@grpc/grpc-js';
import type { TlsOptions } from '@ledgerline/client';
import type { Command } from 'commander';
import { usageError, CliReason } from './cli-errors.js';

/** What every command that calls a service connects with: TLS and a bearer token, both off by default. */
export interface ConnectionSecurity {
  tls: TlsOptions | false;
  token: string | undefined;
}

interface SecurityFlags {
  tlsCa?: string;
  tlsCert?: string;
  tlsKey?: string;
  token?: string;
}

/** The largest PEM file read for --tls-* (a bundle of a few dozen certificates). */
const MAX_PEM_BYTES = 1024 * 1024;

function readPem(flag: string, path: string): Buffer {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw usageError(CliReason.FILE_UNREADABLE, `${flag} ${path}: ${(error as Error).message}`);
  }
  if (bytes.length > MAX_PEM_BYTES) throw usageError(CliReason.FILE_TOO_LARGE, `${flag} ${path} is over 1 MiB`);
  return bytes;
}

/** TLS and token of the command line (global options), reading the PEM files now so a bad path is exit status 2. */
export function connectionSecurityOf(command: Command): ConnectionSecurity {
  const flags = command.optsWithGlobals() as SecurityFlags;
  const token = flags.token ?? process.env['LEDGERLINE_TOKEN'];
  if ((flags.tlsCert === undefined) !== (flags.tlsKey === undefined)) {
    throw usageError(CliReason.TLS_OPTIONS_INCOMPLETE, '--tls-cert and --tls-key go together (mutual TLS)');
  }
  const anyTls = flags.tlsCa !== undefined || flags.tlsCert !== undefined;
  const tls: TlsOptions | false = anyTls
    ? {
        ...(flags.tlsCa === undefined ? {} : { ca: readPem('--tls-ca', flags.tlsCa) }),
        ...(flags.tlsCert === undefined ? {} : { cert: readPem('--tls-cert', flags.tlsCert) }),
        ...(flags.tlsKey === undefined ? {} : { key: readPem('--tls-key', flags.tlsKey) }),
      }
    : false;
  return { tls, token: token === '' ? undefined : token };
}

/** The bearer token as call metadata, for the admin and collector clients. */
export function tokenMetadata(token: string | undefined): Metadata | undefined {
  if (token === undefined) return undefined;
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}
