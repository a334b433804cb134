import { AdminService, LookupService } from '@ledgerline/proto';
import type { Channel } from '@grpc/grpc-js';
import { channelCredentials } from '@ledgerline/client';
import { closeClient, createChannel, createClient, type Client, type ClientOptions } from '@ledgerline/rpc';
import { tokenMetadata, type ConnectionSecurity } from './connection-security.js';
import { usageError, CliReason } from './cli-errors.js';

export { DEFAULT_URL } from './global-options.js';

/** The longest --url accepted. */
const MAX_URL_LENGTH = 1024;

/** How long one admin call may take before it fails with DEADLINE_EXCEEDED. */
export const CALL_DEADLINE_MS = 30_000;

export interface AdminConnection {
  readonly url: string;
  readonly admin: Client<typeof AdminService>;
  readonly lookup: Client<typeof LookupService>;
  close(): void;
}

/** Accepts `host:port` or `grpc://host:port` / `http://host:port`, as users tend to write either. */
export function normaliseUrl(url: string): string {
  return url.replace(/^(grpc|http|ledgerline):\/\//, '').replace(/\/+$/, '');
}

/** Refuses a --url no channel could use, before any call (exit status 2 rather than a crash). */
export function openChannel(target: string, security?: ConnectionSecurity): Channel {
  const invalid = () =>
    usageError(CliReason.INVALID_URL, `--url ${JSON.stringify(target.slice(0, 200))} is not an address: use host:port`);
  if (target === '' || /\s/.test(target) || target.length > MAX_URL_LENGTH) throw invalid();
  // Bad PEM fails here with its own message, not as a bad address.
  const settings = security === undefined ? {} : { credentials: channelCredentials(security.tls) };
  try {
    return createChannel(target, settings);
  } catch {
    throw invalid();
  }
}

/** Client options of the admin and collector clients: the call deadline and the bearer token. */
export function adminClientOptions(security?: ConnectionSecurity): ClientOptions {
  const metadata = tokenMetadata(security?.token);
  return { defaultDeadlineMs: CALL_DEADLINE_MS, ...(metadata === undefined ? {} : { defaultMetadata: metadata }) };
}

export function connectAdmin(url: string, security?: ConnectionSecurity): AdminConnection {
  const target = normaliseUrl(url);
  const channel = openChannel(target, security);
  const options = adminClientOptions(security);
  const admin = createClient(AdminService, channel, options);
  const lookup = createClient(LookupService, channel, options);
  return {
    url: target,
    admin,
    lookup,
    close() {
      closeClient(admin);
      closeClient(lookup);
      channel.close();
    },
  };
}
